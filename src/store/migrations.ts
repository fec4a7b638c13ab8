import type { Migration } from "./database.js";

/**
 * Migrations of the session store (versions 1–99). Other capabilities keep
 * theirs beside their code, in their own version range (responses: 100–199,
 * compaction: 200–299), and build-container passes them all to openDatabase.
 */
export const STORE_MIGRATIONS: readonly Migration[] = [];
