// The doctest runner for the replication room's unit tests (server/replication).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
