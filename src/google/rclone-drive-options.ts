/**
 * The options of rclone's `drive` backend as rclone 1.60.1 registers them (`rclone config providers`):
 * name, default as rclone prints it (fmt.Sprint of the Go default), type, whether it is advanced, and
 * whether the configurator hides it. The authorize blob leaves out options at these defaults, exactly as
 * rclone's Options.NonDefault does, so both must agree.
 */
export interface DriveOption {
  name: string;
  default: string;
  type: string;
  advanced?: boolean;
  /** Hidden from `rclone config` questions (set by other steps, e.g. team_drive). */
  hidden?: boolean;
  help: string;
}

export const DRIVE_OPTIONS: readonly DriveOption[] = [
  { name: 'client_id', default: '', type: 'string', help: 'Google Application Client Id' },
  { name: 'client_secret', default: '', type: 'string', help: 'OAuth Client Secret.' },
  { name: 'token', default: '', type: 'string', advanced: true, help: 'OAuth Access Token as a JSON blob.' },
  { name: 'auth_url', default: '', type: 'string', advanced: true, help: 'Auth server URL.' },
  { name: 'token_url', default: '', type: 'string', advanced: true, help: 'Token server url.' },
  { name: 'scope', default: '', type: 'string', help: 'Scope that rclone should use when requesting access from drive.' },
  { name: 'root_folder_id', default: '', type: 'string', advanced: true, help: 'ID of the root folder.' },
  { name: 'service_account_file', default: '', type: 'string', help: 'Service Account Credentials JSON file path.' },
  { name: 'service_account_credentials', default: '', type: 'string', advanced: true, hidden: true, help: 'Service Account Credentials JSON blob.' },
  { name: 'team_drive', default: '', type: 'string', advanced: true, hidden: true, help: 'ID of the Shared Drive (Team Drive).' },
  { name: 'auth_owner_only', default: 'false', type: 'bool', advanced: true, help: 'Only consider files owned by the authenticated user.' },
  { name: 'use_trash', default: 'true', type: 'bool', advanced: true, help: 'Send files to the trash instead of deleting permanently.' },
  { name: 'copy_shortcut_content', default: 'false', type: 'bool', advanced: true, help: 'Server side copy contents of shortcuts instead of the shortcut.' },
  { name: 'skip_gdocs', default: 'false', type: 'bool', advanced: true, help: 'Skip google documents in all listings.' },
  { name: 'skip_checksum_gphotos', default: 'false', type: 'bool', advanced: true, help: 'Skip MD5 checksum on Google photos and videos only.' },
  { name: 'shared_with_me', default: 'false', type: 'bool', advanced: true, help: 'Only show files that are shared with me.' },
  { name: 'trashed_only', default: 'false', type: 'bool', advanced: true, help: 'Only show files that are in the trash.' },
  { name: 'starred_only', default: 'false', type: 'bool', advanced: true, help: 'Only show files that are starred.' },
  { name: 'formats', default: '', type: 'string', advanced: true, hidden: true, help: 'Deprecated: See export_formats.' },
  { name: 'export_formats', default: 'docx,xlsx,pptx,svg', type: 'string', advanced: true, help: 'Comma separated list of preferred formats for downloading Google docs.' },
  { name: 'import_formats', default: '', type: 'string', advanced: true, help: 'Comma separated list of preferred formats for uploading Google docs.' },
  { name: 'allow_import_name_change', default: 'false', type: 'bool', advanced: true, help: 'Allow the filetype to change when uploading Google docs.' },
  { name: 'use_created_date', default: 'false', type: 'bool', advanced: true, hidden: true, help: 'Use file created date instead of modified date.' },
  { name: 'use_shared_date', default: 'false', type: 'bool', advanced: true, hidden: true, help: 'Use date file was shared instead of modified date.' },
  { name: 'list_chunk', default: '1000', type: 'int', advanced: true, help: 'Size of listing chunk 100-1000, 0 to disable.' },
  { name: 'impersonate', default: '', type: 'string', advanced: true, help: 'Impersonate this user when using a service account.' },
  { name: 'alternate_export', default: 'false', type: 'bool', hidden: true, help: 'Deprecated: No longer needed.' },
  { name: 'upload_cutoff', default: '8Mi', type: 'SizeSuffix', advanced: true, help: 'Cutoff for switching to chunked upload.' },
  { name: 'chunk_size', default: '8Mi', type: 'SizeSuffix', advanced: true, help: 'Upload chunk size.' },
  { name: 'acknowledge_abuse', default: 'false', type: 'bool', advanced: true, help: 'Set to allow files which return cannotDownloadAbusiveFile to be downloaded.' },
  { name: 'keep_revision_forever', default: 'false', type: 'bool', advanced: true, help: 'Keep new head revision of each file forever.' },
  { name: 'size_as_quota', default: 'false', type: 'bool', advanced: true, hidden: true, help: 'Show sizes as storage quota usage, not actual size.' },
  { name: 'v2_download_min_size', default: 'off', type: 'SizeSuffix', advanced: true, help: 'If Object\'s are greater, use drive v2 API to download.' },
  { name: 'pacer_min_sleep', default: '100ms', type: 'Duration', advanced: true, help: 'Minimum time to sleep between API calls.' },
  { name: 'pacer_burst', default: '100', type: 'int', advanced: true, help: 'Number of API calls to allow without sleeping.' },
  { name: 'server_side_across_configs', default: 'false', type: 'bool', advanced: true, help: 'Allow server-side operations (e.g. copy) to work across different drive configs.' },
  { name: 'disable_http2', default: 'true', type: 'bool', advanced: true, help: 'Disable drive using http2.' },
  { name: 'stop_on_upload_limit', default: 'false', type: 'bool', advanced: true, help: 'Make upload limit errors be fatal.' },
  { name: 'stop_on_download_limit', default: 'false', type: 'bool', advanced: true, help: 'Make download limit errors be fatal.' },
  { name: 'skip_shortcuts', default: 'false', type: 'bool', advanced: true, help: 'If set skip shortcut files.' },
  { name: 'skip_dangling_shortcuts', default: 'false', type: 'bool', advanced: true, help: 'If set skip dangling shortcut files.' },
  { name: 'resource_key', default: '', type: 'string', advanced: true, help: 'Resource key for accessing a link-shared file.' },
  { name: 'encoding', default: 'InvalidUtf8', type: 'MultiEncoder', advanced: true, help: 'The encoding for the backend.' },
];

const BY_NAME = new Map(DRIVE_OPTIONS.map((o) => [o.name, o]));

export function driveOption(name: string): DriveOption | undefined {
  return BY_NAME.get(name);
}

/**
 * Advanced options the walkthrough offers at "Edit advanced config?": rclone's visible advanced options,
 * minus `token` (set by authorization) and `root_folder_id` (asked at step 7 already).
 */
export function advancedDriveOptions(): DriveOption[] {
  return DRIVE_OPTIONS.filter((o) => o.advanced && !o.hidden && o.name !== 'token' && o.name !== 'root_folder_id');
}

/** Checks a typed value against the option's type; undefined when fine. */
export function optionValueProblem(option: DriveOption, value: string): string | undefined {
  if (option.type === 'bool' && !/^(true|false)$/.test(value)) return `${option.name} is true or false`;
  if (option.type === 'int' && !/^-?\d+$/.test(value)) return `${option.name} is a whole number`;
  if (option.type === 'SizeSuffix' && !/^(off|\d+(\.\d+)?([bBkKmMgGtTpP]i?)?)$/.test(value)) return `${option.name} is a size such as 8Mi, or off`;
  if (option.type === 'Duration' && !/^(off|(\d+(\.\d+)?(ns|us|µs|ms|s|m|h|d|w|M|y))+)$/.test(value)) return `${option.name} is a duration such as 100ms`;
  return undefined;
}

/** The scope values and their descriptions, numbered 1-5 in this order as rclone lists them. */
export const DRIVE_SCOPES: ReadonlyArray<{ value: string; help: string }> = [
  { value: 'drive', help: 'Full access all files, excluding Application Data Folder.' },
  { value: 'drive.readonly', help: 'Read-only access to file metadata and file contents.' },
  { value: 'drive.file', help: 'Access to files created by rclone only.\nThese are visible in the drive website.\nFile authorization is revoked when the user deauthorizes the app.' },
  { value: 'drive.appfolder', help: 'Allows read and write access to the Application Data folder.\nThis is not visible in the drive website.' },
  { value: 'drive.metadata.readonly', help: 'Allows read-only access to file metadata but\ndoes not allow any access to read or download file content.' },
];

/** OAuth scope URLs for rclone's `scope` option (comma list; empty means full drive access). */
export function scopeUrls(scope: string): string[] {
  const names = scope.split(',').map((s) => s.trim()).filter(Boolean);
  return (names.length ? names : ['drive']).map((s) => `https://www.googleapis.com/auth/${s}`);
}
