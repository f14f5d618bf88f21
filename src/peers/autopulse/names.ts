/** A scanrelay target or notification name from an autopulse one (its names may hold other characters). */
export const safeName = (name: string): string => name.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^[^A-Za-z0-9]+/, '') || 'target';
