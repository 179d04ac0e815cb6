#pragma once

#include <cstddef>     // std::size_t
#include <functional>  // std::function
#include <string>      // std::string
#include <string_view> // std::string_view
#include <vector>      // std::vector

namespace spinrpc::bench {

/// The command line of a bench executable (spinrpc-bench, spinrpc-replay,
/// spinrpc-json-bench): options `--name VALUE` or `--name=VALUE`, switches
/// `--name`. Each option is declared with what to do with its text; the
/// parse either consumes every argument (a stand-alone tool: an unknown one
/// is an error) or leaves the unknown ones in argv for another parser
/// (spinrpc-bench: Google Benchmark's --benchmark_* flags).
class FlagParser {
 public:
  /// `set` receives the option's text; it throws std::invalid_argument for a
  /// bad value (the helpers below do).
  void option(std::string name, std::function<void(std::string_view)> set);
  void flag(std::string name, std::function<void()> set);

  /// Parses argv[1..argc). With `keep_unknown`, arguments it does not know
  /// stay in argv (argc shrinks to them); without, an unknown argument throws.
  /// Throws std::invalid_argument naming the argument for an unknown one or a
  /// missing value. Returns false for a lone --help or -h (not with
  /// `keep_unknown`: the other parser owns --help then), true otherwise.
  bool parse(int& argc, char** argv, bool keep_unknown = false) const;

 private:
  struct Option {
    std::string name;
    bool takes_value;
    std::function<void(std::string_view)> set;
  };
  std::vector<Option> options_;
};

/// `text` as a whole number (digits only, at most 9: "-1" and "5x" are
/// refused, unlike std::stoul's) from `min` to `max`; throws
/// std::invalid_argument naming `option` otherwise.
std::size_t whole_number(std::string_view option, std::string_view text, std::size_t min = 0,
                         std::size_t max = 999'999'999);

/// `text` as a finite number above 0; throws std::invalid_argument naming `option` otherwise.
double positive_number(std::string_view option, std::string_view text);

/// `text` split at commas, empty pieces dropped.
std::vector<std::string> split_list(std::string_view text);

}  // namespace spinrpc::bench
