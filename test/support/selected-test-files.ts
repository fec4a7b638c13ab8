import type { TestProject } from "vitest/node";

/** The test files this run selected: those the command line's file filters match (`vitest run test/clients`), or every one. */
export async function selectedTestFiles(project: TestProject): Promise<string[]> {
  // the filters vitest was started with; it keeps them on the instance without a public accessor
  const filters = (project.vitest as unknown as { filenamePattern?: string[] }).filenamePattern;
  return (await project.globTestFiles(filters)).testFiles;
}
