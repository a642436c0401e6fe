#include "sqlite_settings.h"
#include "sqlite_nio_sqlite3.h"

int savedesk_sqlite_configure(int statement_journal_spill) {
    return sqlite_nio_sqlite3_config(SQLITE_CONFIG_STMTJRNL_SPILL, statement_journal_spill);
}
