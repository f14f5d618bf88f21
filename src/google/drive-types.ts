import { z } from 'zod';

/** Drive v3 JSON shapes scanrelay reads (passthrough: Google adds fields freely). */
export const driveFileSchema = z.looseObject({
  id: z.string(),
  name: z.string(),
  mimeType: z.string().optional(),
  parents: z.array(z.string()).optional(),
  trashed: z.boolean().optional(),
  driveId: z.string().optional(),
  md5Checksum: z.string().optional(),
  size: z.string().optional(),
});
export type DriveFile = z.infer<typeof driveFileSchema>;

export const driveChangeSchema = z.looseObject({
  changeType: z.string().optional(),
  fileId: z.string().optional(),
  removed: z.boolean().optional(),
  driveId: z.string().optional(),
  time: z.string().optional(),
  file: driveFileSchema.optional(),
  drive: z.looseObject({ id: z.string(), name: z.string() }).optional(),
});
export type DriveChange = z.infer<typeof driveChangeSchema>;

export const changeListSchema = z.looseObject({
  nextPageToken: z.string().optional(),
  newStartPageToken: z.string().optional(),
  changes: z.array(driveChangeSchema).default([]),
});
export type ChangeList = z.infer<typeof changeListSchema>;

export const startPageTokenSchema = z.looseObject({ startPageToken: z.string() });

export const sharedDriveSchema = z.looseObject({ id: z.string(), name: z.string() });
export type SharedDrive = z.infer<typeof sharedDriveSchema>;

export const driveListSchema = z.looseObject({
  nextPageToken: z.string().optional(),
  drives: z.array(sharedDriveSchema).default([]),
});

/** Fields asked for in changes.list and files.get: only what the cache and the filters use. */
export const CHANGE_FIELDS =
  'nextPageToken,newStartPageToken,changes(changeType,fileId,removed,driveId,time,drive(id,name),file(id,name,mimeType,parents,trashed,driveId,md5Checksum,size))';
export const FILE_FIELDS = 'id,name,mimeType,parents,trashed,driveId,md5Checksum,size';
