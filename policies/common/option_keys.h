/*
 * What the built-in plugins share for their nested option tables (the core checks only the
 * top-level keys a plugin declares): unknown keys in a table such as [[policy.rules.rule]]
 * are recorded as positioned configuration errors naming the accepted ones. Header-only and
 * policy.h-only, so each plugin is still built from api/tidal/policy.h alone.
 */
#ifndef TIDAL_POLICIES_OPTION_KEYS_H
#define TIDAL_POLICIES_OPTION_KEYS_H

#include <stdio.h>
#include <string.h>

#include "tidal/policy.h"

/* 1 when every key of `view` is in the NULL-terminated `allowed`; otherwise records an error
 * per unknown key ("unknown key 'x' in `where` (accepted: ...)") and returns 0. */
static inline int tidal_plugin_check_keys(const tidal_options_api *api, const tidal_options *view,
                                          const char *const *allowed, const char *where)
{
    int ok = 1;
    for (size_t i = 0; i < api->key_count(view); ++i) {
        const char *key = api->key_at(view, i);
        const char *const *a = allowed;
        while (*a && strcmp(*a, key) != 0)
            ++a;
        if (!*a) {
            char msg[256];
            int len = snprintf(msg, sizeof msg, "unknown key '%s' in %s (accepted:", key, where);
            for (a = allowed; *a && len > 0 && (size_t)len < sizeof msg; ++a)
                len += snprintf(msg + len, sizeof msg - (size_t)len, " %s", *a);
            if (len > 0 && (size_t)len < sizeof msg - 1)
                snprintf(msg + len, sizeof msg - (size_t)len, ")");
            api->error(view, key, msg);
            ok = 0;
        }
    }
    return ok;
}

#endif /* TIDAL_POLICIES_OPTION_KEYS_H */
