// Host only (never included by device code): running loops on a few threads.
//
// parallel_chunks(n, max_threads, min_per_thread, fn) calls fn(begin, end) on
// consecutive chunks covering [0, n), one chunk per thread, on up to
// max_threads threads (the caller's included) and no more than n /
// min_per_thread of them. The threads are plain std::threads, started for the
// call and joined before it returns; when no thread can be started, the
// caller runs every chunk itself.
#ifndef SIM_HOST_THREADS_H
#define SIM_HOST_THREADS_H

#include <thread>
#include <vector>

#include "sim_config.h"

namespace sim {

inline int chunk_count(int64 n, int max_threads, int64 min_per_thread) {
    int64 chunks = min_per_thread > 0 ? n / min_per_thread : n;
    if (chunks > max_threads) chunks = max_threads;
    return chunks > 1 ? int(chunks) : 1;
}

template <typename F>
void parallel_chunks(int64 n, int max_threads, int64 min_per_thread, const F& fn) {
    const int chunks = chunk_count(n, max_threads, min_per_thread);
    const int64 size = (n + chunks - 1) / chunks;
    auto run = [&](int c) {
        const int64 begin = size * c < n ? size * c : n;
        const int64 end = size * (c + 1) < n ? size * (c + 1) : n;
        if (begin < end) fn(begin, end);
    };
    std::vector<std::thread> team;
    int c = 1;
    try {
        for (; c < chunks; ++c) team.emplace_back(run, c);
    } catch (...) {  // no more threads to be had: the caller runs the rest
    }
    for (int rest = c; rest < chunks; ++rest) run(rest);
    run(0);
    for (std::thread& t : team) t.join();
}

}  // namespace sim

#endif  // SIM_HOST_THREADS_H
