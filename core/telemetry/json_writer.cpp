#include "telemetry/json_writer.h"

#include <fmt/format.h>

#include <cmath>

namespace tidal::telemetry {

void JsonWriter::separate()
{
    if (after_key_) {
        after_key_ = false;
        return;
    }
    if (!first_.empty()) {
        if (!first_.back())
            out_ += ',';
        first_.back() = false;
    }
}

void JsonWriter::open(char bracket)
{
    separate();
    out_ += bracket;
    first_.push_back(true);
}

void JsonWriter::close(char bracket)
{
    first_.pop_back();
    out_ += bracket;
}

JsonWriter &JsonWriter::begin_object()
{
    open('{');
    return *this;
}

JsonWriter &JsonWriter::end_object()
{
    close('}');
    return *this;
}

JsonWriter &JsonWriter::begin_array()
{
    open('[');
    return *this;
}

JsonWriter &JsonWriter::end_array()
{
    close(']');
    return *this;
}

JsonWriter &JsonWriter::key(std::string_view name)
{
    value(name);
    out_ += ':';
    after_key_ = true;
    return *this;
}

JsonWriter &JsonWriter::value(std::string_view text)
{
    separate();
    out_ += '"';
    for (const char c : text) {
        switch (c) {
        case '"': out_ += "\\\""; break;
        case '\\': out_ += "\\\\"; break;
        case '\n': out_ += "\\n"; break;
        case '\t': out_ += "\\t"; break;
        case '\r': out_ += "\\r"; break;
        default:
            // Tags are the caller's bytes: control characters are escaped, other bytes pass
            // (a tag that is not UTF-8 makes a file strict readers refuse; tidal does not judge).
            if (static_cast<unsigned char>(c) < 0x20)
                out_ += fmt::format("\\u{:04x}", static_cast<unsigned>(static_cast<unsigned char>(c)));
            else
                out_ += c;
        }
    }
    out_ += '"';
    return *this;
}

JsonWriter &JsonWriter::value(uint64_t number)
{
    separate();
    out_ += fmt::format("{}", number);
    return *this;
}

JsonWriter &JsonWriter::value(int64_t number)
{
    separate();
    out_ += fmt::format("{}", number);
    return *this;
}

JsonWriter &JsonWriter::value(double number)
{
    separate();
    out_ += std::isfinite(number) ? fmt::format("{}", number) : std::string("null");
    return *this;
}

JsonWriter &JsonWriter::null()
{
    separate();
    out_ += "null";
    return *this;
}

JsonWriter &JsonWriter::value(bool flag)
{
    separate();
    out_ += flag ? "true" : "false";
    return *this;
}

} // namespace tidal::telemetry
