// libstdc++ instances whose names clang-19 mangles with C++20's `Tn` (template parameter
// declarations), which the cpp_demangle crate cannot read: hookprof asks llvm-cxxfilt
// (issue 26: once a name, one process each, made names the larger part of a report).
#include <cstdio>
#include <map>
#include <string>
#include <tuple>
#include <utility>

int main() {
    std::map<std::string, int> counts;
    for (int i = 0; i < 10; ++i)
        counts.emplace(std::to_string(i % 4), i);
    char c = 'a';
    int n = 1;
    std::pair<char, long> p(c, n);
    std::tuple<int, long, char> t(n, n, c);
    std::printf("%zu %c %ld\n", counts.size(), p.first, std::get<1>(t));
    return 0;
}
