// Whether a work-shared kernel ends with a barrier.
#pragma once

namespace kiln::kernels {

// NoWait lets each thread move on to the next kernel as soon as its own share
// is done; only for a next kernel that neither reads this one's output nor
// writes its input (e.g. the K projection after the Q projection).
enum class Sync { Barrier, NoWait };

}  // namespace kiln::kernels
