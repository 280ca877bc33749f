// A small JSON text builder for the statistics snapshot and the leak report: the core links no
// JSON library, and what it writes is flat enough for this (objects, arrays, numbers, strings).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tidal::telemetry {

class JsonWriter {
public:
    JsonWriter &begin_object();
    JsonWriter &end_object();
    JsonWriter &begin_array();
    JsonWriter &end_array();
    JsonWriter &key(std::string_view name);
    JsonWriter &value(std::string_view text);
    JsonWriter &value(const char *text) { return value(std::string_view(text)); }
    JsonWriter &value(uint64_t number);
    JsonWriter &value(int64_t number);
    JsonWriter &value(int32_t number) { return value(static_cast<int64_t>(number)); }
    JsonWriter &value(uint32_t number) { return value(static_cast<uint64_t>(number)); }
    JsonWriter &value(double number);
    JsonWriter &value(bool flag);
    JsonWriter &null();
    // key(name).value(v), the common case.
    template <typename T> JsonWriter &field(std::string_view name, T v) { return key(name).value(v); }
    // The text so far (complete once every object and array is closed).
    const std::string &text() const noexcept { return out_; }

private:
    void separate();
    void open(char bracket);
    void close(char bracket);

    std::string out_;
    std::vector<bool> first_; // per open object/array: nothing written in it yet
    bool after_key_ = false;
};

} // namespace tidal::telemetry
