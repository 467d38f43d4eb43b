// The pair-list output buffer's protocol on the CPU (include/twobody/cuda/pair_pool.hpp): a host
// simulation of the kernels' warps writing into a pool of pages, running out, and being resumed
// over many launches must hand over every pair exactly once; the pool's shape and its overrides;
// the pages' compaction; and RunOptions::pair_sink on the CPU backend. The CUDA side runs the same
// arithmetic (tests/cuda_backend_test.cpp checks it against the CPU backend on a GPU).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "test_support.hpp"
#include "vector_test_data.hpp"
#include "twobody/detail/cpu/output_sinks.hpp"
#include "twobody/detail/cuda/pair_pool.hpp"
#include "twobody/engine.hpp"

using namespace twobody;
using namespace twobody::cuda;

namespace {

// One warp of the simulation, as PairOutput's PairList state: its page, its unit's pairs emitted
// this launch and known written, stopped when the pool ran out.
struct SimWarp {
  PageCursor page;
  unsigned long long emitted = 0, written = 0;
  bool stopped = false;
  std::size_t call = 0;  // next emit call of its unit
};

// A unit's pairs: per warp of the unit, the sizes of its successive warp-wide writes (emit_hits),
// fixed for the unit as a traversal's order is. Pair (unit, warp, k) is the k-th its warp emits.
struct SimUnit {
  std::vector<std::vector<unsigned>> calls;  // [warp][call]
};

struct SimPool {
  PairListBuffer b;
  std::vector<PairSlot> slots;
  std::vector<std::uint32_t> unused;
  std::vector<unsigned long long> task_unit, task_skip, stopped_unit, stopped_skip;
  unsigned long long next_page = 0, stopped = 0, next_task = 0;
};

// emit_hits of pair_output.cuh for a write of n pairs by warp w of unit u (the lanes' order is the
// device's business; here pair k of the unit is simply the k-th emitted).
void sim_emit(SimPool& p, SimWarp& w, unsigned n, unsigned long long u, int warp, int warps) {
  if (n == 0) return;
  const unsigned long long before = w.emitted;
  w.emitted += n;
  if (w.stopped || w.emitted <= w.written) return;
  ASSERT_GE(w.written, before);
  const unsigned long long skip = w.written - before, m = n - skip, S = p.b.page_size;
  const unsigned long long room = page_room(w.page, S);
  const unsigned long long k = pages_to_claim(w.page, m, S);
  unsigned long long first = 0, granted = 0;
  if (k) {
    first = p.next_page;
    p.next_page += k;
    granted = pages_granted(first, k, p.b.pages);
  }
  const unsigned long long fit = std::min(m, room + granted * S);
  for (unsigned long long q = skip; q < skip + fit; ++q) {
    const unsigned long long slot = slot_of(w.page, room, first, q - skip, S);
    ASSERT_LT(slot, p.slots.size());
    ASSERT_EQ(p.slots[slot].i, ~0u) << "slot written twice";
    p.slots[slot] = PairSlot{static_cast<std::uint32_t>(u * static_cast<unsigned>(warps) + static_cast<unsigned>(warp)),
                             static_cast<std::uint32_t>(before + q), 0.5 * static_cast<double>(before + q)};
  }
  w.page = advance(w.page, room, first, granted, fit, S);
  ASSERT_LE(w.page.fill, S);
  w.written += fit;
  w.stopped = fit < m;
}

// Runs the units through a pool of `pages` x `page_size` with `workers` workers (blocks of `warps`
// warps) interleaved at random, launch after launch until the queue is empty; returns the pairs
// drained, and the launches.
std::pair<std::vector<PairRecord>, int> simulate(const std::vector<SimUnit>& units, int warps, unsigned long long pages,
                                                 unsigned long long page_size, int workers, std::mt19937_64& rng) {
  SimPool p;
  p.b.page_size = page_size;
  p.b.pages = pages;
  p.b.warps = warps;
  p.b.stopped_capacity = static_cast<unsigned long long>(workers);
  PairListQueue queue(units.size(), warps);
  std::vector<PairRecord> out;
  int launches = 0;
  do {
    ++launches;
    // prepare(): the launch's tasks and zeroed counters.
    p.task_unit = queue.resumed_units();
    p.task_skip = queue.resumed_skips();
    EXPECT_LE(p.task_unit.size(), static_cast<std::size_t>(workers));
    p.b.task_unit = p.task_unit.data();
    p.b.task_skip = p.task_skip.data();
    p.b.resumed = p.task_unit.size();
    p.b.first_unit = queue.first_unit();
    const unsigned long long n_tasks = queue.tasks();
    p.slots.assign(pages * page_size, PairSlot{~0u, ~0u, 0.0});
    p.unused.assign(pages, 0);
    p.stopped_unit.assign(static_cast<std::size_t>(workers), 0);
    p.stopped_skip.assign(static_cast<std::size_t>(workers) * static_cast<unsigned>(warps), 0);
    p.next_page = p.stopped = p.next_task = 0;

    // The workers: each holds a task (unit) and its warps, which persist across its tasks.
    struct Worker {
      std::vector<SimWarp> w;
      unsigned long long unit = 0;
      bool has_task = false, exited = false;
    };
    std::vector<Worker> ws(static_cast<std::size_t>(workers));
    for (auto& wk : ws) wk.w.resize(static_cast<std::size_t>(warps));
    auto claim = [&](Worker& wk) {
      const unsigned long long t = p.next_task++;
      if (t >= n_tasks) {
        wk.exited = true;
        return;
      }
      wk.unit = p.b.unit_of(t);
      for (int x = 0; x < warps; ++x) {
        SimWarp& sw = wk.w[static_cast<std::size_t>(x)];
        sw.emitted = 0;
        sw.written = p.b.skip_of(t, x);
        sw.stopped = false;
        sw.call = 0;
      }
      wk.has_task = true;
    };
    for (;;) {
      std::vector<std::size_t> live;
      for (std::size_t k = 0; k < ws.size(); ++k)
        if (!ws[k].exited) live.push_back(k);
      if (live.empty()) break;
      Worker& wk = ws[live[std::uniform_int_distribution<std::size_t>(0, live.size() - 1)(rng)]];
      if (!wk.has_task) {
        claim(wk);
        continue;
      }
      // One write of one of its warps with calls left, or the end of the unit.
      const auto& calls = units[wk.unit].calls;
      std::vector<int> busy;
      for (int x = 0; x < warps; ++x)
        if (wk.w[static_cast<std::size_t>(x)].call < calls[static_cast<std::size_t>(x)].size()) busy.push_back(x);
      if (!busy.empty()) {
        const int x = busy[std::uniform_int_distribution<std::size_t>(0, busy.size() - 1)(rng)];
        SimWarp& sw = wk.w[static_cast<std::size_t>(x)];
        sim_emit(p, sw, calls[static_cast<std::size_t>(x)][sw.call++], wk.unit, x, warps);
        continue;
      }
      bool stopped = false;
      for (const auto& sw : wk.w) stopped = stopped || sw.stopped;
      wk.has_task = false;
      if (stopped) {  // record_stopped, and the worker ends
        const unsigned long long k = p.stopped++;
        EXPECT_LT(k, p.b.stopped_capacity);
        p.stopped_unit[k] = wk.unit;
        for (int x = 0; x < warps; ++x)
          p.stopped_skip[k * static_cast<unsigned>(warps) + static_cast<unsigned>(x)] = wk.w[static_cast<std::size_t>(x)].written;
        wk.exited = true;
      }
    }
    // finish(): the page each warp ends on.
    for (const auto& wk : ws)
      for (const auto& sw : wk.w)
        if (sw.page.page != kNoPage) p.unused[sw.page.page] = static_cast<std::uint32_t>(page_size - sw.page.fill);
    // drain(): the used pages, then the queue.
    const unsigned long long used = std::min(p.next_page, pages);
    const std::size_t before = out.size();
    drain_pages(p.slots.data(), p.unused.data(), used, page_size, nullptr, nullptr, false, out);
    for (std::size_t k = before; k < out.size(); ++k) EXPECT_NE(out[k].i, ~0u) << "a hole in a drained page";
    queue.after_launch(p.next_task, p.stopped_unit.data(), p.stopped_skip.data(), p.stopped);
    if (launches > 100000) {
      ADD_FAILURE() << "no progress";
      break;
    }
  } while (!queue.done());
  return {out, launches};
}

}  // namespace

TEST(PairPool, ResumedLaunchesHandOverEveryPairOnce) {
  const auto seed = testing_support::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  int many_launches = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const int warps = trial % 2 ? 8 : 1;  // a brute-force tile's warps, a grid unit's one
    const std::size_t n_units = std::uniform_int_distribution<std::size_t>(0, 40)(rng);
    std::vector<SimUnit> units(n_units);
    std::map<std::pair<std::uint64_t, std::uint64_t>, int> expected;
    for (std::size_t u = 0; u < n_units; ++u) {
      units[u].calls.resize(static_cast<std::size_t>(warps));
      for (int x = 0; x < warps; ++x) {
        const int n_calls = std::uniform_int_distribution<int>(0, 6)(rng);
        unsigned total = 0;
        for (int c = 0; c < n_calls; ++c) {
          const unsigned n =
              std::uniform_int_distribution<unsigned>(0, 3)(rng) == 0 ? 0 : std::uniform_int_distribution<unsigned>(1, 64)(rng);
          units[u].calls[static_cast<std::size_t>(x)].push_back(n);
          total += n;
        }
        for (unsigned k = 0; k < total; ++k) expected[{u * static_cast<unsigned>(warps) + static_cast<unsigned>(x), k}] = 1;
      }
    }
    // Pools from a few slots (at least a hundredth of the pairs, to keep the launches in hand) to
    // more than the pairs.
    const unsigned long long page_size = std::uniform_int_distribution<unsigned long long>(1, 40)(rng);
    const unsigned long long floor_pages = (expected.size() / 100 + page_size - 1) / page_size;
    const unsigned long long pages =
        std::max(floor_pages, std::uniform_int_distribution<unsigned long long>(1, trial % 5 ? 6 : 400)(rng));
    const int workers = std::uniform_int_distribution<int>(1, 12)(rng);
    SCOPED_TRACE("trial " + std::to_string(trial) + ": " + std::to_string(n_units) + " units of " + std::to_string(warps) +
                 " warps, " + std::to_string(pages) + " pages of " + std::to_string(page_size) + ", " +
                 std::to_string(workers) + " workers");
    const auto [pairs, launches] = simulate(units, warps, pages, page_size, workers, rng);
    std::map<std::pair<std::uint64_t, std::uint64_t>, int> got;
    for (const auto& r : pairs) {
      ++got[{r.i, r.j}];
      ASSERT_EQ(r.value, 0.5 * static_cast<double>(r.j));
    }
    ASSERT_EQ(got, expected);
    many_launches += launches > 10;
  }
  EXPECT_GT(many_launches, 50);  // the tiny pools did force many resumes
}

TEST(PairPool, PageArithmetic) {
  const unsigned long long S = 10;
  PageCursor none;
  EXPECT_EQ(page_room(none, S), 0u);
  EXPECT_EQ(pages_to_claim(none, 1, S), 1u);
  EXPECT_EQ(pages_to_claim(none, 25, S), 3u);
  const PageCursor c{4, 7};
  EXPECT_EQ(page_room(c, S), 3u);
  EXPECT_EQ(pages_to_claim(c, 3, S), 0u);
  EXPECT_EQ(pages_to_claim(c, 4, S), 1u);
  EXPECT_EQ(pages_to_claim(c, 13, S), 1u);
  EXPECT_EQ(pages_to_claim(c, 14, S), 2u);
  EXPECT_EQ(pages_granted(5, 3, 10), 3u);
  EXPECT_EQ(pages_granted(8, 3, 10), 2u);
  EXPECT_EQ(pages_granted(10, 3, 10), 0u);
  EXPECT_EQ(pages_granted(17, 3, 10), 0u);
  // The cursor's 3 slots (47..49), then pages 8 and 9.
  EXPECT_EQ(slot_of(c, 3, 8, 0, S), 47u);
  EXPECT_EQ(slot_of(c, 3, 8, 2, S), 49u);
  EXPECT_EQ(slot_of(c, 3, 8, 3, S), 80u);
  EXPECT_EQ(slot_of(c, 3, 8, 14, S), 91u);
  const PageCursor a = advance(c, 3, 8, 2, 15, S);
  EXPECT_EQ(a.page, 9u);
  EXPECT_EQ(a.fill, 2u);
  const PageCursor b = advance(c, 3, 0, 0, 2, S);
  EXPECT_EQ(b.page, 4u);
  EXPECT_EQ(b.fill, 9u);
  // Run out: 3 pages asked, 1 granted: the cursor's room and that page, all full.
  const PageCursor f = advance(c, 3, 9, pages_granted(9, 3, 10), 13, S);
  EXPECT_EQ(f.page, 9u);
  EXPECT_EQ(f.fill, S);
}

TEST(PairPool, QueueResumesStoppedAndUnclaimedUnits) {
  PairListQueue q(10, 2);
  EXPECT_EQ(q.tasks(), 10u);
  // Tasks 0..3 claimed; units 1 and 3 stopped.
  const std::vector<unsigned long long> u1{1, 3}, s1{5, 0, 2, 7};
  q.after_launch(4, u1.data(), s1.data(), 2);
  EXPECT_EQ(q.resumed_units(), u1);
  EXPECT_EQ(q.resumed_skips(), s1);
  EXPECT_EQ(q.first_unit(), 4u);
  EXPECT_EQ(q.tasks(), 8u);
  // Only the first resumed task claimed, and it stopped again: unit 3 and units 4.. still wait.
  const std::vector<unsigned long long> u2{1}, s2{9, 0};
  q.after_launch(1, u2.data(), s2.data(), 1);
  EXPECT_EQ(q.resumed_units(), (std::vector<unsigned long long>{1, 3}));
  EXPECT_EQ(q.resumed_skips(), (std::vector<unsigned long long>{9, 0, 2, 7}));
  EXPECT_EQ(q.first_unit(), 4u);
  // Everything claimed (the counter runs past the tasks), nothing stopped.
  q.after_launch(100, nullptr, nullptr, 0);
  EXPECT_TRUE(q.done());
}

TEST(PairPool, ShapeFromFreeMemoryAndOverrides) {
  const std::size_t GiB = std::size_t(1) << 30;
  // A short list: small pages, and the pool no larger than the list plus a page per warp.
  auto s = pair_pool_shape(80 * GiB, 1000, 8448);
  EXPECT_EQ(s.page_size, 32u);
  EXPECT_GE(s.pages * s.page_size, 1000u + 8448u * 32u);
  EXPECT_LT(s.pages * s.page_size, 1000u + 8448u * 32u + 32u);
  // A long one: at most 1 GiB of pairs, pages up to 4096 with the warps' pages a quarter of it.
  s = pair_pool_shape(80 * GiB, 1ull << 40, 8448);
  EXPECT_EQ(s.pages * s.page_size, 1ull << 26);
  EXPECT_EQ(s.page_size, 1024u);
  EXPECT_LE(4 * 8448 * s.page_size, 1ull << 26);
  // Little free memory: a quarter of it.
  s = pair_pool_shape(64u << 20, 1ull << 40, 100);
  EXPECT_LE(s.pages * s.page_size * sizeof(PairSlot), (64u << 20) / 4);
  EXPECT_GE(s.pages, 1u);
  s = pair_pool_shape(0, 0, 0);
  EXPECT_GE(s.pages, 1u);
  EXPECT_GE(s.page_size, 1u);
  // Overrides.
  s = pair_pool_shape(80 * GiB, 1ull << 40, 8448, 5, 3);
  EXPECT_EQ(s.page_size, 5u);
  EXPECT_EQ(s.pages, 3u);
  s = pair_pool_shape(80 * GiB, 1000, 8448, 7, std::nullopt);
  EXPECT_EQ(s.page_size, 7u);
  EXPECT_GE(s.pages * 7, 1000u + 8448u * 7u);
  // (The overrides' text is parsed and checked by TuningPolicy: agent_choice_test.cpp.)
}

TEST(PairPool, DrainDropsUnusedSlotsAndMapsIndices) {
  // Two pages of 4: the first full, the second with one unused slot; grid order maps back.
  const std::vector<PairSlot> slots{{0, 1, 1.0}, {2, 0, 2.0}, {1, 2, 3.0}, {3, 3, 4.0},
                                    {0, 3, 5.0}, {1, 1, 6.0}, {2, 2, 7.0}, {9, 9, 0.0}};
  const std::vector<std::uint32_t> unused{0, 1};
  const std::vector<std::uint32_t> order{3, 0, 2, 1};
  std::vector<PairRecord> out;
  drain_pages(slots.data(), unused.data(), 2, 4, order.data(), order.data(), true, out);
  ASSERT_EQ(out.size(), 7u);
  EXPECT_EQ(out[0].i, 0u);  // (3, 0) swapped: auto keeps i < j
  EXPECT_EQ(out[0].j, 3u);
  EXPECT_EQ(out[1].i, 2u);
  EXPECT_EQ(out[1].j, 3u);
  EXPECT_EQ(out[6].i, 2u);
  EXPECT_EQ(out[6].j, 2u);
  EXPECT_EQ(out[6].value, 7.0);
  out.clear();
  drain_pages(slots.data(), unused.data(), 1, 4, nullptr, nullptr, false, out);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[1].i, 2u);
  EXPECT_EQ(out[1].j, 0u);
}

// RunOptions::pair_sink on the CPU backend: the same pairs as Result::pairs, once, which stays
// empty; the threads hand their pairs over as they fill (every 65 536 a thread), each batch sorted,
// so a list larger than memory streams. Points (grid and brute force: the grid's cell order mapped
// back) and vectors. A sink that throws stops the run with its exception.
namespace {
std::vector<PairRecord> sunk_pairs(const std::function<Result(const RunOptions&)>& run_with, RunOptions o, int& batches) {
  std::vector<PairRecord> sunk;
  batches = 0;
  o.pair_sink = [&](std::span<const PairRecord> b) {
    ++batches;
    EXPECT_TRUE(std::is_sorted(b.begin(), b.end(), pair_order));
    sunk.insert(sunk.end(), b.begin(), b.end());
  };
  EXPECT_TRUE(run_with(o).pairs.empty());
  std::sort(sunk.begin(), sunk.end(), pair_order);
  return sunk;
}

void expect_same_pairs(const std::vector<PairRecord>& sunk, const std::vector<PairRecord>& whole) {
  ASSERT_EQ(sunk.size(), whole.size());
  for (std::size_t k = 0; k < sunk.size(); ++k) {
    EXPECT_EQ(sunk[k].i, whole[k].i);
    EXPECT_EQ(sunk[k].j, whole[k].j);
    EXPECT_EQ(sunk[k].value, whole[k].value);
  }
}
}  // namespace

TEST(PairPool, PairSinkGetsTheListOnTheCpu) {
  std::mt19937_64 rng(testing_support::fresh_seed());
  const auto A = testing_support::to_pointset(testing_support::uniform_points(6000, 3, 0, 10, rng));
  const auto B = testing_support::to_pointset(testing_support::uniform_points(5000, 3, 0, 10, rng));
  for (const char* path : {"grid", "brute"}) {
    for (const PointSet* b : {static_cast<const PointSet*>(nullptr), &B}) {
      Statistic s;
      s.traversal = b ? Traversal::Cross : Traversal::Auto;
      s.reduction = reduce::PairList{Binning::from_edges({0.0, 2.0})};
      RunOptions o;
      o.backend = "cpu";
      o.path = path;
      o.threads = 3;
      const auto run_with = [&](const RunOptions& x) { return run(s, A, b, x); };
      const Result whole = run_with(o);
      ASSERT_GT(whole.pairs.size(), 3 * twobody::cpu::PairStream::kFlushPairs) << path;
      int batches = 0;
      expect_same_pairs(sunk_pairs(run_with, o, batches), whole.pairs);
      EXPECT_GT(batches, 3) << path;
      // The limit still holds, and a sink's own error stops the run.
      RunOptions limited = o;
      limited.max_pairs = 100;
      limited.pair_sink = [](std::span<const PairRecord>) {};
      testing_support::expect_error(ErrorKind::Resource, "pair list exceeds the limit of 100", [&] { run_with(limited); });
      limited.max_pairs = std::size_t(1) << 40;
      limited.pair_sink = [](std::span<const PairRecord>) { throw Error(ErrorKind::Output, "disk full"); };
      testing_support::expect_error(ErrorKind::Output, "disk full", [&] { run_with(limited); });
    }
  }
  // Vectors (a join's pairs), 40 dimensions.
  const VectorSet V = testing_support::gaussian_vectors(4000, 40, rng);
  Statistic s;
  s.metric = Metric::Euclidean;
  s.reduction = reduce::PairList{Binning::from_edges({0.0, 7.0}), true};
  RunOptions o;
  o.backend = "cpu";
  o.threads = 2;
  const auto run_with = [&](const RunOptions& x) { return run(s, V, nullptr, x); };
  const Result whole = run_with(o);
  ASSERT_GT(whole.pairs.size(), 2 * twobody::cpu::PairStream::kFlushPairs);
  int batches = 0;
  expect_same_pairs(sunk_pairs(run_with, o, batches), whole.pairs);
  EXPECT_GT(batches, 2);
}
