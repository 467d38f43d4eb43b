// The forces' per-point sums of each dimension they take (1 to 3), instantiated once here for
// every metric of that dimension (cpu/run_pair_function.hpp declares them).
#include "twobody/detail/cpu/point_sums.hpp"

namespace twobody::cpu {

template Result run_point_sums<1>(const Plan&, const GridChoice*);
template Result run_point_sums<2>(const Plan&, const GridChoice*);
template Result run_point_sums<3>(const Plan&, const GridChoice*);

}  // namespace twobody::cpu
