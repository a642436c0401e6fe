#ifndef SAVEDESK_SQLITE_SETTINGS_H
#define SAVEDESK_SQLITE_SETTINGS_H

/// SQLite's process-wide settings that only C can make (`sqlite3_config` is variadic, and Swift
/// does not call variadic C functions). Called once, before SQLite is first initialized; returns
/// SQLITE_OK, or SQLITE_MISUSE when SQLite was initialized already (its defaults then stay).
///
/// `statement_journal_spill`: the bytes a statement journal or savepoint sub-journal keeps in
/// memory before it moves to a temporary file (SQLite's default, 64 KiB, is 16 pages).
int savedesk_sqlite_configure(int statement_journal_spill);

#endif
