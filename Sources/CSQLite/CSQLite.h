// The system SQLite (libsqlite3), for HaulService's store.
#ifndef CSQLITE_H
#define CSQLITE_H

#include <sqlite3.h>

/// SQLITE_TRANSIENT (a macro Swift cannot import): SQLite copies a bound value at once.
static inline sqlite3_destructor_type haul_sqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

#endif
