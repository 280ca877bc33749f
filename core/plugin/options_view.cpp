#include "plugin/options_view.h"

#include "config/toml_include.h"

#include <fmt/format.h>

#include "config/size_parser.h"
#include "status/error.h"

namespace tidal {
namespace {

const OptionsView *self(const tidal_options *view) { return static_cast<const OptionsView *>(view); }

const toml::node *lookup(const tidal_options *view, const char *key)
{
    const toml::table *t = view ? self(view)->table() : nullptr;
    if (!t || !key)
        return nullptr;
    return t->at_path(key).node();
}

const char *type_name(const toml::node &n)
{
    switch (n.type()) {
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a number";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::array: return "an array";
    case toml::node_type::table: return "a table";
    default: return "a date or time";
    }
}

tidal_status mismatch(const tidal_options *view, const char *key, const toml::node &n, const char *wanted)
{
    self(view)->record_error(key, fmt::format("'{}' must be {}, not {}", key, wanted, type_name(n)));
    return TIDAL_ERROR_CONFIG;
}

tidal_status get_string(const tidal_options *view, const char *key, const char **out)
{
    const toml::node *n = lookup(view, key);
    if (!n)
        return TIDAL_ERROR_NOT_FOUND;
    if (!n->is_string())
        return mismatch(view, key, *n, "a string");
    if (out)
        *out = n->as_string()->get().c_str();
    return TIDAL_OK;
}

tidal_status get_int(const tidal_options *view, const char *key, int64_t *out)
{
    const toml::node *n = lookup(view, key);
    if (!n)
        return TIDAL_ERROR_NOT_FOUND;
    if (!n->is_integer())
        return mismatch(view, key, *n, "an integer");
    if (out)
        *out = n->as_integer()->get();
    return TIDAL_OK;
}

tidal_status get_double(const tidal_options *view, const char *key, double *out)
{
    const toml::node *n = lookup(view, key);
    if (!n)
        return TIDAL_ERROR_NOT_FOUND;
    if (!n->is_number())
        return mismatch(view, key, *n, "a number");
    if (out)
        *out = n->value<double>().value_or(0.0);
    return TIDAL_OK;
}

tidal_status get_bool(const tidal_options *view, const char *key, int *out)
{
    const toml::node *n = lookup(view, key);
    if (!n)
        return TIDAL_ERROR_NOT_FOUND;
    if (!n->is_boolean())
        return mismatch(view, key, *n, "a boolean");
    if (out)
        *out = n->as_boolean()->get() ? 1 : 0;
    return TIDAL_OK;
}

tidal_status get_size(const tidal_options *view, const char *key, uint64_t *out)
{
    const toml::node *n = lookup(view, key);
    if (!n)
        return TIDAL_ERROR_NOT_FOUND;
    if (n->is_integer()) {
        int64_t v = n->as_integer()->get();
        if (v < 0) {
            self(view)->record_error(key, fmt::format("'{}' must not be negative", key));
            return TIDAL_ERROR_CONFIG;
        }
        if (out)
            *out = static_cast<uint64_t>(v);
        return TIDAL_OK;
    }
    if (!n->is_string())
        return mismatch(view, key, *n, "a size (bytes, or a string such as \"512MiB\")");
    std::string why;
    auto parsed = parse_size(n->as_string()->get(), &why);
    if (!parsed) {
        self(view)->record_error(key, fmt::format("'{}': {}", key, why));
        return TIDAL_ERROR_CONFIG;
    }
    if (out)
        *out = *parsed;
    return TIDAL_OK;
}

size_t array_length(const tidal_options *view, const char *key)
{
    const toml::node *n = lookup(view, key);
    return n && n->is_array() ? n->as_array()->size() : 0;
}

tidal_status get_string_at(const tidal_options *view, const char *key, size_t index, const char **out)
{
    const toml::node *n = lookup(view, key);
    if (!n || !n->is_array() || index >= n->as_array()->size())
        return TIDAL_ERROR_NOT_FOUND;
    const toml::node &e = *n->as_array()->get(index);
    if (!e.is_string())
        return mismatch(view, key, e, "an array of strings");
    if (out)
        *out = e.as_string()->get().c_str();
    return TIDAL_OK;
}

const tidal_options *table(const tidal_options *view, const char *key, size_t index)
{
    return view ? self(view)->child(key, index) : nullptr;
}

size_t key_count(const tidal_options *view)
{
    const toml::table *t = view ? self(view)->table() : nullptr;
    return t ? t->size() : 0;
}

const char *key_at(const tidal_options *view, size_t index)
{
    const toml::table *t = view ? self(view)->table() : nullptr;
    if (!t || index >= t->size())
        return nullptr;
    auto it = t->begin();
    std::advance(it, static_cast<std::ptrdiff_t>(index));
    return it->first.str().data(); // toml++ keys own NUL-terminated std::string storage
}

void error(const tidal_options *view, const char *key, const char *message)
{
    if (view)
        self(view)->record_error(key, message ? message : "invalid value");
}

constexpr tidal_options_api kApi{
    sizeof(tidal_options_api), get_string, get_int, get_double, get_bool, get_size,
    array_length, get_string_at, table, key_count, key_at, error,
};

} // namespace

OptionsView::OptionsView(const toml::table *table, std::string where, std::filesystem::path source)
    : table_(table), where_(std::move(where)), source_(std::move(source)), root_(this)
{
}

OptionsView::OptionsView(const toml::table *table, std::string where, OptionsView *root)
    : table_(table), where_(std::move(where)), source_(root->source_), root_(root)
{
}

const tidal_options_api *OptionsView::api() noexcept { return &kApi; }

std::string OptionsView::position(const char *key) const
{
    const toml::node *n = table_ && key ? table_->at_path(key).node() : nullptr;
    const toml::source_region &region = n ? n->source() : (table_ ? table_->source() : toml::source_region{});
    std::string file = source_.empty() ? std::string("<string>") : source_.string();
    return fmt::format("{}:{}:{}", file, region.begin.line, region.begin.column);
}

void OptionsView::record_error(const char *key, const std::string &message) const
{
    std::string text = fmt::format("{}: in {}: {}", position(key), where_, message);
    std::lock_guard lock(root_->mutex_);
    root_->errors_.push_back(std::move(text));
}

const OptionsView *OptionsView::child(const char *key, size_t index) const
{
    if (!table_ || !key)
        return nullptr;
    const toml::node *n = table_->at_path(key).node();
    if (!n)
        return nullptr;
    const toml::table *t = nullptr;
    std::string where;
    if (index == static_cast<size_t>(-1)) {
        t = n->as_table();
        where = fmt::format("{}.{}", where_, key);
    } else if (const toml::array *a = n->as_array(); a && index < a->size()) {
        t = a->get(index)->as_table();
        where = fmt::format("{}.{}[{}]", where_, key, index);
    }
    if (!t)
        return nullptr;
    std::lock_guard lock(root_->mutex_);
    auto &slot = root_->children_[{t, index}];
    if (!slot)
        slot.reset(new OptionsView(t, std::move(where), root_));
    return slot.get();
}

void OptionsView::raise_if_errors(const std::string &who) const
{
    std::lock_guard lock(root_->mutex_);
    if (root_->errors_.empty())
        return;
    std::string text = who + ": " + root_->errors_.front();
    for (size_t i = 1; i < root_->errors_.size(); ++i)
        text += "; " + root_->errors_[i];
    throw Error(TIDAL_ERROR_CONFIG, text, "fix the option in the configuration file");
}

} // namespace tidal
