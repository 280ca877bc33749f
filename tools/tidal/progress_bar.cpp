#include "progress_bar.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace tidal_tool {

namespace {
constexpr size_t kWidth = 30;
constexpr size_t kLabelWidth = 40;
} // namespace

ProgressBar::ProgressBar(size_t total, bool enabled)
    : total_(std::max<size_t>(total, 1)), active_(enabled && isatty(STDERR_FILENO) == 1)
{
}

ProgressBar::~ProgressBar()
{
    if (active_) {
        fmt::print(stderr, "\r{:{}}\r", "", kWidth + kLabelWidth + 20);
        std::fflush(stderr);
    }
}

void ProgressBar::step(const std::string &label)
{
    if (!active_)
        return;
    draw(label);
    done_ = std::min(done_ + 1, total_);
}

void ProgressBar::draw(const std::string &label) const
{
    const size_t filled = done_ * kWidth / total_;
    std::string text = label.size() > kLabelWidth ? label.substr(0, kLabelWidth) : label;
    fmt::print(stderr, "\r[{}{}] {:3}% {:<{}}", std::string(filled, '#'), std::string(kWidth - filled, '.'),
               done_ * 100 / total_, text, kLabelWidth);
    std::fflush(stderr);
}

} // namespace tidal_tool
