#include "bench/harness/flag_parser.h"

#include <cmath>      // std::isfinite
#include <cstdlib>    // std::strtod
#include <stdexcept>  // std::invalid_argument

namespace spinrpc::bench {

void FlagParser::option(std::string name, std::function<void(std::string_view)> set) {
  options_.push_back({std::move(name), true, std::move(set)});
}

void FlagParser::flag(std::string name, std::function<void()> set) {
  options_.push_back({std::move(name), false, [set = std::move(set)](std::string_view) { set(); }});
}

bool FlagParser::parse(int& argc, char** argv, bool keep_unknown) const {
  if (!keep_unknown && argc == 2 && (std::string_view(argv[1]) == "--help" || std::string_view(argv[1]) == "-h")) {
    return false;
  }
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const std::size_t eq = arg.find('=');
    const std::string_view name = arg.substr(0, eq);
    const Option* found = nullptr;
    for (const Option& o : options_) {
      if (o.name == name) found = &o;
    }
    if (found == nullptr) {
      if (!keep_unknown) throw std::invalid_argument("unknown argument " + std::string(arg));
      argv[kept++] = argv[i];
      continue;
    }
    if (!found->takes_value) {
      if (eq != std::string_view::npos) throw std::invalid_argument(std::string(name) + " takes no value");
      found->set({});
    } else if (eq != std::string_view::npos) {
      found->set(arg.substr(eq + 1));
    } else {
      if (i + 1 >= argc) throw std::invalid_argument(std::string(name) + " needs a value");
      found->set(argv[++i]);
    }
  }
  argc = kept;
  argv[argc] = nullptr;
  return true;
}

std::size_t whole_number(std::string_view option, std::string_view text, std::size_t min, std::size_t max) {
  std::size_t n = 0;
  const bool digits = !text.empty() && text.size() <= 9 && text.find_first_not_of("0123456789") == std::string_view::npos;
  if (digits) {
    for (const char c : text) n = n * 10 + static_cast<std::size_t>(c - '0');
  }
  if (!digits || n < min || n > max) {
    throw std::invalid_argument(std::string(option) + " takes a whole number from " + std::to_string(min) + " to " +
                                std::to_string(max) + ", not " + std::string(text));
  }
  return n;
}

double positive_number(std::string_view option, std::string_view text) {
  const std::string s(text);
  char* end = nullptr;
  const double x = s.empty() ? 0 : std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(x) || x <= 0) {
    throw std::invalid_argument(std::string(option) + " takes a number above 0, not " + s);
  }
  return x;
}

std::vector<std::string> split_list(std::string_view text) {
  std::vector<std::string> out;
  std::size_t from = 0;
  while (from <= text.size()) {
    const std::size_t comma = std::min(text.find(',', from), text.size());
    if (comma > from) out.emplace_back(text.substr(from, comma - from));
    from = comma + 1;
  }
  return out;
}

}  // namespace spinrpc::bench
