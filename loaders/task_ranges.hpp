// Array task ids as batch systems print them: `1-10:2,15` (Grid Engine's qstat `tasks`, Slurm's
// array_task_string, whose `%N` throttle suffix is dropped). Shared by the sge and slurm loaders.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace colmatch::loaders {

/// The ids of `text`: comma-separated items `A`, `A-B` or `A-B:STEP` (ids from `min_id` up, B >= A,
/// STEP >= 1), in order. Throws std::invalid_argument for malformed text or more than `room` ids.
std::vector<uint64_t> expand_task_ranges(std::string_view text, uint64_t room, uint64_t min_id = 0);

}  // namespace colmatch::loaders
