#include "CHaulSys.h"

// HAUL_COMMIT is defined by Package.swift from the HAUL_COMMIT environment variable (which
// Scripts/build-release.sh sets from git) as a string literal; absent in a plain build.
const char *haul_build_commit(void) {
#ifdef HAUL_COMMIT
    return HAUL_COMMIT;
#else
    return NULL;
#endif
}
