#include <doctest/doctest.h>

#include <string>

#include "runtime/error_table.h"

using tidal::ErrorTable;

TEST_CASE("native errors map to statuses per numbering family")
{
    CHECK(ErrorTable::status_of(TIDAL_RT_FAMILY_HIP, 0) == TIDAL_OK);
    CHECK(ErrorTable::status_of(TIDAL_RT_FAMILY_HIP, 2) == TIDAL_ERROR_OUT_OF_MEMORY);
    CHECK(ErrorTable::status_of(TIDAL_RT_FAMILY_CUDA, 2) == TIDAL_ERROR_OUT_OF_MEMORY);
    CHECK(ErrorTable::status_of(TIDAL_RT_FAMILY_HIP, 100) == TIDAL_ERROR_NO_DEVICE);
    CHECK(ErrorTable::status_of(TIDAL_RT_FAMILY_CUDA, 35) == TIDAL_ERROR_NO_DEVICE);
    CHECK(ErrorTable::status_of(TIDAL_RT_FAMILY_HIP, 700) == TIDAL_ERROR_ILLEGAL_ACCESS);
    CHECK(ErrorTable::status_of(TIDAL_RT_FAMILY_CUDA, 801) == TIDAL_ERROR_NOT_SUPPORTED);
    CHECK(ErrorTable::status_of(TIDAL_RT_FAMILY_HIP, 12345) == TIDAL_ERROR_RUNTIME);
}

TEST_CASE("a translated error names the native error, its number and a hint")
{
    tidal::Error e = ErrorTable::translate(TIDAL_RT_FAMILY_HIP, 2, "hipErrorOutOfMemory", "allocating 4096 bytes");
    CHECK(e.status() == TIDAL_ERROR_OUT_OF_MEMORY);
    const std::string text = e.what();
    CHECK(text.find("allocating 4096 bytes") != std::string::npos);
    CHECK(text.find("hipErrorOutOfMemory (2)") != std::string::npos);
    CHECK(text.find("hint:") != std::string::npos);
}
