// A read-only view of one TOML table, handed to plugins through tidal_options_api so they
// never link a TOML library. Errors a plugin records (or type mismatches the view finds) are
// collected with file:line:column and raised by the core after the plugin's init.
#pragma once

#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tidal/policy.h"

namespace toml {
inline namespace v3 {
class table;
}
} // namespace toml

struct tidal_options {
    virtual ~tidal_options() = default;
};

namespace tidal {

class OptionsView final : public tidal_options {
public:
    // `table` may be null: an empty view. `where` names the table in messages ("[policy.rules]").
    OptionsView(const toml::table *table, std::string where, std::filesystem::path source);

    static const tidal_options_api *api() noexcept;

    const std::vector<std::string> &errors() const noexcept { return root_->errors_; }
    // Throws TIDAL_ERROR_CONFIG listing the recorded errors, prefixed by `who`.
    void raise_if_errors(const std::string &who) const;

    // file:line:column of `key` in this table (or of the table itself for an empty key).
    std::string position(const char *key) const;
    void record_error(const char *key, const std::string &message) const;

    const toml::table *table() const noexcept { return table_; }
    const OptionsView *child(const char *key, size_t index) const;

private:
    OptionsView(const toml::table *table, std::string where, OptionsView *root);

    const toml::table *table_;
    std::string where_;
    std::filesystem::path source_;
    OptionsView *root_;
    // Owned by the root: children handed out, cached so the same key gives the same view;
    // the mutex guards these and the error list (plugins may read options from any thread).
    mutable std::mutex mutex_;
    mutable std::map<std::pair<const void *, size_t>, std::unique_ptr<OptionsView>> children_;
    mutable std::vector<std::string> errors_;
};

} // namespace tidal
