/** One relative import that crosses from one folder into another (in the layer graph, from one layer into another). */
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
export interface ImportGraph {
  folders: string[];
  edges: FolderImport[];
}

export function layerOf(folder: string): string;
export function folderGraph(root?: string): ImportGraph;
export function layerGraph(root?: string): ImportGraph;
export function documentedFloors(root?: string): string[];
export function documentedLayers(floors: string[]): { layers: string[]; split: string[] };
export function floorOf(folder: string, floors: string[]): number;
export function upward(edges: FolderImport[], floors: string[]): FolderImport[];
export function unlisted(folders: string[], floors: string[]): string[];
export function components(folders: string[], edges: FolderImport[]): string[][];
export function cycles(root?: string, graph?: ImportGraph): FolderCycle[];
export function describe(edge: FolderImport): string;
