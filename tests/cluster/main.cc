// The doctest runner for the cluster room's unit tests (server/cluster).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
