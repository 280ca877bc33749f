// What a runtime call was doing, for the message of its error if it fails: nothing (the
// operation's own description is used), a string, or a callable returning one. The callable
// runs only on failure, so hot paths (copies, prefetches, kernels) never format a message that
// is not needed. It refers to its argument without copying it: build it in the call's argument
// list, never keep it.
#pragma once

#include <string>
#include <type_traits>

namespace tidal {

class CallDescription {
public:
    CallDescription() noexcept = default;
    CallDescription(const char *text) noexcept : text_(text) {}
    CallDescription(const std::string &text) noexcept : text_(text.c_str()) {}
    template <typename F>
        requires std::is_invocable_v<const F &>
    CallDescription(const F &describe) noexcept
        : callable_(&describe),
          call_([](const void *c) { return std::string((*static_cast<const F *>(c))()); })
    {
    }

    bool empty() const noexcept { return !text_ && !call_; }
    // The description, or `fallback` when there is none.
    std::string text(const char *fallback = "") const
    {
        if (call_)
            return call_(callable_);
        return text_ ? text_ : fallback;
    }

private:
    const char *text_ = nullptr;
    const void *callable_ = nullptr;
    std::string (*call_)(const void *) = nullptr;
};

} // namespace tidal
