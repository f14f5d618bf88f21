import { z } from 'zod';

/** A service's address: http:// or https:// and a host, checked when the config is read (not at the first scan). */
export const httpUrl = () =>
  z
    .string()
    .trim()
    .refine((v) => {
      if (!/^https?:\/\//i.test(v)) return false;
      try {
        return new URL(v).hostname !== '';
      } catch {
        return false;
      }
    }, 'must be an http:// or https:// URL, e.g. http://localhost:8989');

/** A key or token: not empty. */
export const credential = () => z.string().trim().min(1, 'must not be empty');
