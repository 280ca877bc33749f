// toml++ as every part of tidal includes it (one definition for all, so its inline functions
// agree across files). toml++ 3.3 guards some of its parser's states with assertions instead
// of errors: malformed text such as `a=[}` fails one and aborts the process, or, built with
// NDEBUG, runs on as undefined behaviour. Configuration text is user input, so each of those
// assertions throws a parse error instead (line unknown), whatever NDEBUG says.
#pragma once

#include <cstddef>

namespace tidal::detail {
[[noreturn]] void toml_check_failed(const char *expression);
} // namespace tidal::detail

#ifdef NDEBUG
#define TIDAL_TOML_RESTORE_NDEBUG 1
#undef NDEBUG // toml++ replaces TOML_ASSERT by an assumption under NDEBUG
#endif
#undef TOML_ASSERT
#define TOML_ASSERT(expr) ((expr) ? static_cast<void>(0) : ::tidal::detail::toml_check_failed(#expr))
#include <toml++/toml.h>
#ifdef TIDAL_TOML_RESTORE_NDEBUG
#define NDEBUG 1
#undef TIDAL_TOML_RESTORE_NDEBUG
#endif
