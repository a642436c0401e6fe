#ifndef SAVEDESK_CSQLITECONFIG_SHIM_H
#define SAVEDESK_CSQLITECONFIG_SHIM_H
// SQLite's process-wide settings. sqlite3_config is variadic, which Swift cannot call; SQLiteNIO's
// copy of SQLite names it sqlite_nio_sqlite3_config. Each wrapper passes the one argument its
// option takes. Only before SQLite is initialized (sqlite3_initialize) does a setting take.
extern int sqlite_nio_sqlite3_config(int option, ...);

/// SQLITE_CONFIG_STMTJRNL_SPILL (26): the bytes a statement journal (the pages a savepoint or a
/// statement may have to roll back) holds in memory before it moves to a temporary file.
static inline int savedesk_sqlite_config_statement_journal_spill(int bytes) {
    return sqlite_nio_sqlite3_config(26, bytes);
}
#endif
