#include "runtime/sim/sim_fault_injector.h"

#include <stdexcept>
#include <string>

namespace tidal::sim {

FaultInjector::FaultInjector(std::vector<FaultSpec> specs)
{
    rules_.reserve(specs.size());
    for (const FaultSpec &spec : specs) {
        const auto op = parse(spec.operation);
        if (!op)
            throw std::invalid_argument("unknown fault operation '" + spec.operation + "'");
        if (spec.nth == 0)
            throw std::invalid_argument("fault on '" + spec.operation +
                                        "': nth counts calls from 1");
        rules_.push_back({*op, spec.nth, spec.count, spec.native_error});
    }
}

FaultInjector::Verdict FaultInjector::check(Operation op) noexcept
{
    const uint64_t call = calls_[static_cast<std::size_t>(op)].fetch_add(1) + 1;
    for (const Rule &rule : rules_) {
        if (rule.op != op || call < rule.nth)
            continue;
        if (rule.count == 0 || call - rule.nth < rule.count)
            return {rule.native_error, call};
    }
    return {0, call};
}

uint64_t FaultInjector::calls(Operation op) const noexcept
{
    return calls_[static_cast<std::size_t>(op)].load();
}

std::optional<Operation> FaultInjector::parse(std::string_view name) noexcept
{
    for (std::size_t i = 0; i < kFaultOperations.size(); ++i)
        if (name == kFaultOperations[i])
            return static_cast<Operation>(i);
    return std::nullopt;
}

const char *FaultInjector::name(Operation op) noexcept
{
    return kFaultOperations[static_cast<std::size_t>(op)].data(); // literals: NUL-terminated
}

} // namespace tidal::sim
