/** One relative import that crosses from one folder into another. */
export interface FolderImport {
  /** The importing file, as a repository path. */
  from: string;
  line: number;
  specifier: string;
  /** The imported path, resolved against the repository root. */
  to: string;
  fromFolder: string;
  toFolder: string;
}

export interface FolderCycle {
  folders: string[];
  imports: FolderImport[];
}

export function folderOf(path: string): string | undefined;
export function sourceFiles(root?: string): string[];
export function importsOf(root: string, file: string): Omit<FolderImport, "fromFolder" | "toFolder">[];
export function folderGraph(root?: string): { folders: string[]; edges: FolderImport[] };
export function components(folders: string[], edges: FolderImport[]): string[][];
export function cycles(root?: string): FolderCycle[];
export function describe(edge: FolderImport): string;
