// kiln-bench: the benchmark program every compiled model gets (<name>-bench),
// in the spirit of llama-bench: prompt ingestion (pp) and generation (tg)
// speed as medians of repeated runs, next to this machine's measured limits.
#pragma once

#include "apps/cli.hpp"
#include "apps/token_profile.hpp"

namespace kiln {

// `name` is the model's name (the program is <name>-bench); time_kernels
// times the kernels of one generation step for the report.
int bench_main(int argc, char** argv, const ModelEntry& model, KernelTimer time_kernels);

}  // namespace kiln
