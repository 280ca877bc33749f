// A one-line progress bar on stderr, drawn only when stderr is a terminal: a log file or a
// pipe gets nothing (no carriage returns in CI output).
#pragma once

#include <cstddef>
#include <string>

namespace tidal_tool {

class ProgressBar {
public:
    // `enabled` false (or stderr not a terminal) makes every call a no-op.
    ProgressBar(size_t total, bool enabled);
    ~ProgressBar(); // clears the line
    ProgressBar(const ProgressBar &) = delete;
    ProgressBar &operator=(const ProgressBar &) = delete;

    // Starting the next step: shows what it measures.
    void step(const std::string &label);

private:
    void draw(const std::string &label) const;

    size_t total_;
    size_t done_ = 0;
    bool active_;
};

} // namespace tidal_tool
