// The one exception type inside the core. Thrown anywhere below capi.cpp, caught there and
// turned into a tidal_status plus the thread's detailed message; it never crosses the C ABI.
#pragma once

#include <exception>
#include <string>
#include <utility>

#include "tidal/tidal.h"

namespace tidal {

// A runtime's own error, carried into the message as "name (number)".
struct NativeError {
    int code = 0;
    std::string name; // e.g. "hipErrorOutOfMemory"; empty when there is none
};

class Error : public std::exception {
public:
    Error(tidal_status status, std::string message, std::string hint = {}, NativeError native = {})
        : status_(status), message_(std::move(message)), hint_(std::move(hint)),
          native_(std::move(native))
    {
        text_ = message_;
        if (!native_.name.empty())
            text_ += " [" + native_.name + " (" + std::to_string(native_.code) + ")]";
        if (!hint_.empty())
            text_ += "; hint: " + hint_;
    }

    tidal_status status() const noexcept { return status_; }
    const std::string &message() const noexcept { return message_; }
    const std::string &hint() const noexcept { return hint_; }
    const NativeError &native() const noexcept { return native_; }
    // The full text: message, native error and hint, as tidal_last_error() shows it.
    const char *what() const noexcept override { return text_.c_str(); }

private:
    tidal_status status_;
    std::string message_;
    std::string hint_;
    NativeError native_;
    std::string text_;
};

} // namespace tidal
