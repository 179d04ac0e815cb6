#include "bench/workload/trace_file.h"

#include <fcntl.h>   // ::open, O_RDONLY, O_CLOEXEC
#include <unistd.h>  // ::read, ::close
#include <zlib.h>    // inflateInit2, inflate, inflateEnd (zlib1g-dev)

#include <cerrno>        // errno, EINTR
#include <charconv>      // std::from_chars
#include <cstdio>        // std::snprintf
#include <string_view>   // std::string_view

#include "descriptor/glibc_extensions.h"

namespace spinrpc::bench {
namespace {

constexpr std::string_view kHeaderPrefix = "# spinrpc workload trace ";
constexpr const char* kFields[] = {"METHOD", "REQUEST_BYTES", "REPLY_BYTES", "SERVER_NS", "GAP_NS"};
constexpr std::int64_t kMaxField = (std::int64_t{1} << 53) - 1;  // every reader holds it exactly

// An integer in decimal digits (no '+', no leading zero, no "-0") within
// 2^53 - 1 either way, as trace_file.mjs's integerValue; else the error.
std::string integer_value(std::string_view name, std::string_view field, std::int64_t& value) {
  const std::string_view digits = field.substr(!field.empty() && field[0] == '-' ? 1 : 0);
  const bool integer = field == "0" || (!digits.empty() && digits[0] >= '1' && digits[0] <= '9' &&
                                        digits.find_first_not_of("0123456789") == std::string_view::npos);
  if (!integer) {
    return std::string(name) + " is '" + std::string(field) + "', not an integer in decimal digits (no '+', no leading zero)";
  }
  std::int64_t magnitude = kMaxField + 1;  // more than 16 digits: beyond it
  if (digits.size() <= 16) std::from_chars(digits.data(), digits.data() + digits.size(), magnitude);
  if (magnitude > kMaxField) {
    return std::string(name) + " is " + std::string(field) + ", beyond what every reader holds exactly (2^53 - 1)";
  }
  value = field[0] == '-' ? -magnitude : magnitude;
  return {};
}

bool ends_with(std::string_view text, std::string_view end) {
  return text.size() >= end.size() && text.substr(text.size() - end.size()) == end;
}

std::string read_file(const std::string& path) {
  const auto fail = [&](int err) {
    const char* name = spinrpc::error_name(err);
    return TraceError(path + ": cannot read: " + (name != nullptr ? name : std::to_string(err)));
  };
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw fail(errno);
  std::string bytes;
  char chunk[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      throw fail(err);
    }
    if (n == 0) break;
    bytes.append(chunk, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return bytes;
}

// The text of a .gz trace: exactly one gzip member, checked whole by zlib
// (header, CRC-32, length), and nothing after it.
std::string gunzip_one_member(const std::string& path, const std::string& bytes) {
  const auto fail = [&](const std::string& what) { return TraceError(path + ": " + what); };
  if (bytes.size() < 2 || static_cast<unsigned char>(bytes[0]) != 0x1f || static_cast<unsigned char>(bytes[1]) != 0x8b) {
    throw fail("not gzip-compressed, which a name ending in .gz says it is");
  }
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) throw fail("cannot start zlib");
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  std::string text;
  int status = Z_OK;
  char out[1 << 16];
  while (status == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(out);
    z.avail_out = sizeof out;
    status = inflate(&z, Z_NO_FLUSH);
    text.append(out, sizeof out - z.avail_out);
    // All input given and no progress: the member is not whole.
    if (status == Z_BUF_ERROR || (status == Z_OK && z.avail_in == 0 && z.avail_out != 0)) status = Z_BUF_ERROR;
  }
  const std::string message = z.msg != nullptr ? z.msg : "";
  const uInt left = z.avail_in;
  inflateEnd(&z);
  if (status == Z_BUF_ERROR) throw fail("the gzip data is cut short");
  if (status != Z_STREAM_END) throw fail("corrupt gzip data (" + message + ")");
  if (left > 0) throw fail(std::to_string(left) + " bytes after the end of the gzip data");
  return text;
}

}  // namespace

Trace read_trace(const std::string& path) {
  const std::string bytes = read_file(path);
  const std::string text = ends_with(path, ".gz") ? gunzip_one_member(path, bytes) : bytes;
  std::size_t line_number = 0;
  const auto fail = [&](const std::string& what) {
    return TraceError(path + ": line " + std::to_string(line_number) + ": " + what);
  };
  if (text.empty()) {
    line_number = 1;
    throw fail("no trace header: a trace starts with '" + std::string(kHeaderPrefix) + std::to_string(kTraceVersion) +
               "'; the file is empty");
  }

  Trace trace;
  bool have_methods = false;
  std::size_t ended = 0;  // the end record's line number
  std::string_view rest = text;
  while (!rest.empty()) {
    ++line_number;
    const std::size_t newline = rest.find('\n');
    const std::string_view line = rest.substr(0, newline);
    rest.remove_prefix(newline == std::string_view::npos ? rest.size() : newline + 1);
    for (std::size_t i = 0; i < line.size(); ++i) {
      const unsigned char c = static_cast<unsigned char>(line[i]);
      if (c < 0x20 || c > 0x7e) {
        char what[96];
        std::snprintf(what, sizeof what, "byte 0x%02x at column %zu is not printable ASCII", c, i + 1);
        throw fail(what);
      }
    }
    if (newline == std::string_view::npos) throw fail("the file ends inside this line, without its newline: cut short");
    if (ended != 0) throw fail("text after the end record (line " + std::to_string(ended) + ")");
    if (line_number == 1) {
      const std::string_view after = line.substr(0, kHeaderPrefix.size()) == kHeaderPrefix
                                         ? line.substr(kHeaderPrefix.size())
                                         : std::string_view();
      const std::string_view version = after.substr(0, after.find(' '));
      if (version.empty()) {
        throw fail("no trace header: a trace starts with '" + std::string(kHeaderPrefix) +
                   std::to_string(kTraceVersion) + "'");
      }
      if (version != std::to_string(kTraceVersion)) {
        throw fail("format version " + std::string(version) + "; this reader reads version " +
                   std::to_string(kTraceVersion));
      }
      trace.header.emplace_back(line);
      continue;
    }
    if (line.empty()) throw fail("an empty line");
    if (line[0] == '#') {
      if (trace.requests.empty() && line.substr(0, 6) != "# end ") {
        if (line.substr(0, 9) == "# methods") {
          if (have_methods) throw fail("a second '# methods' line");
          std::vector<std::string> names;
          std::string_view list = line.substr(9);
          bool ok = !list.empty();
          while (ok && !list.empty()) {
            // " NAME" each: one space, then a name without spaces.
            const std::size_t next = list.find(' ', 1);
            const std::string_view name = list.substr(1, next == std::string_view::npos ? std::string_view::npos : next - 1);
            ok = list[0] == ' ' && !name.empty();
            names.emplace_back(name);
            list.remove_prefix(next == std::string_view::npos ? list.size() : next);
          }
          if (!ok) throw fail("'# methods' must be followed by method names, one space before each");
          trace.methods = std::move(names);
          have_methods = true;
        }
        trace.header.emplace_back(line);
        continue;
      }
      if (line.substr(0, 6) != "# end ") {
        throw fail("a '#' line among the requests; only the end record ('# end COUNT') may follow them");
      }
      if (!have_methods) throw fail("no '# methods' line in the header");
      std::int64_t count = 0;
      if (const std::string error = integer_value("the end record's COUNT", line.substr(6), count); !error.empty()) {
        throw fail(error);
      }
      if (count != static_cast<std::int64_t>(trace.requests.size())) {
        throw fail("the end record says " + std::to_string(count) + " requests; the file has " +
                   std::to_string(trace.requests.size()));
      }
      ended = line_number;
      continue;
    }
    if (!have_methods) throw fail("no '# methods' line in the header");
    std::vector<std::string_view> fields;
    for (std::size_t start = 0;;) {
      const std::size_t space = line.find(' ', start);
      fields.push_back(line.substr(start, space == std::string_view::npos ? std::string_view::npos : space - start));
      if (space == std::string_view::npos) break;
      start = space + 1;
    }
    constexpr std::size_t kCount = std::size(kFields);
    if (fields.size() != kCount) {
      throw fail(std::to_string(fields.size()) + " fields; a request has " + std::to_string(kCount) +
                 ": METHOD REQUEST_BYTES REPLY_BYTES SERVER_NS GAP_NS");
    }
    std::int64_t values[kCount];
    for (std::size_t f = 0; f < kCount; ++f) {
      const std::string_view field = fields[f];
      if (const std::string error = integer_value(kFields[f], field, values[f]); !error.empty()) throw fail(error);
      if (values[f] < 0 && f < 3) throw fail(std::string(kFields[f]) + " is " + std::string(field) + "; it cannot be negative");
      if (values[f] < -1) {
        throw fail(std::string(kFields[f]) + " is " + std::string(field) + "; -1 (none) is its only negative value");
      }
    }
    if (static_cast<std::uint64_t>(values[0]) >= trace.methods.size()) {
      throw fail("METHOD is " + std::to_string(values[0]) + ", but the header names " +
                 std::to_string(trace.methods.size()) + " methods");
    }
    trace.requests.push_back(TraceRequest{static_cast<std::uint32_t>(values[0]), static_cast<std::uint64_t>(values[1]),
                                          static_cast<std::uint64_t>(values[2]), values[3], values[4]});
  }
  if (ended == 0) throw fail("the file ends after this line, without its end record ('# end COUNT'): cut short");
  return trace;
}

}  // namespace spinrpc::bench
