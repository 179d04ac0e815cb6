#pragma once

#include <array>       // std::array
#include <functional>  // std::function
#include <optional>    // std::optional
#include <span>        // std::span
#include <string>      // std::string
#include <string_view> // std::string_view
#include <vector>      // std::vector

#include "wait/spin_policy.h"

// spinrpc's settings, said once (docs/SPIN.md#settings): every environment
// variable spinrpc reads, the parsers of the spin settings, the precedence
// (an explicit flag or option beats the environment, which beats the
// default) and the one place that prints a setting's warning. The server's
// command line (app/command_line.h), the client shim's SyncRpcOptions and
// the Node binding's options bring their explicit values as SpinOverrides;
// resolve_spin_policy and resolve_server_settings turn them and the
// environment into one validated value.

namespace spinrpc {

/// An environment variable spinrpc reads: its name, who reads it, and what
/// its value means.
struct EnvironmentVariable {
  const char* name;           ///< NUL-terminated, for getenv
  std::string_view read_by;   ///< the processes or files that read it
  std::string_view meaning;   ///< the values it takes and what they do
};

inline constexpr EnvironmentVariable kSpinBudgetVariable{
    "TSGO_SYNC_SPIN_US", "spinrpc-server, the client shim, the Node binding",
    "the spin budget in µs, a non-negative decimal; 0 turns spinning off (--spin-us, spin.spin_us, spinUs beat it)"};
inline constexpr EnvironmentVariable kSpinAdaptiveVariable{
    "TSGO_SYNC_SPIN_ADAPTIVE", "spinrpc-server, the client shim, the Node binding",
    "the adaptive rule: 1 or true on, 0 or false off (--adaptive, spin.adaptive, adaptive beat it)"};
inline constexpr EnvironmentVariable kPlacementVariable{
    "SPINRPC_PLACEMENT", "spinrpc-server, the client shim, the Node binding",
    "auto, off or occupy: where the spin budget may also go (docs/PLACEMENT.md; --placement, "
    "spin.placement, placement beat it)"};
inline constexpr EnvironmentVariable kPeerSpinsVariable{
    "SPINRPC_PEER_SPINS", "spinrpc-server; the shim and the binding set it for the server they start",
    "1: the client spins while it waits (its budget is over 0), so the server runs the blocked read that "
    "ends a stretch of occupying, or of a CPU shared, off that CPU (docs/PLACEMENT.md#two-spinners-on-one-cpu)"};
inline constexpr EnvironmentVariable kLendRepliesVariable{
    "SPINRPC_LEND_REPLIES", "spinrpc-server; the shim and the binding set it for the server they start",
    "1: the client reads the server's stdout with read(2), so big Responses may be lent to the pipe "
    "(vmsplice) instead of copied into it (docs/NODE.md, \"Large payloads\"); anything else: no"};
inline constexpr EnvironmentVariable kApiVersionVariable{
    "SPINRPC_TS_API", "spinrpc-server",
    "an API version's name (those --ts-api takes, node/dialects.json): the API version to answer in; --ts-api "
    "beats it (docs/PROTOCOL.md, \"API versions\")"};
inline constexpr EnvironmentVariable kWorkingDirectoryVariable{
    "PWD", "spinrpc-server",
    "the working directory as the shell names it: --cwd's default when it names the working directory "
    "(Go's os.Getwd, as tsgo)"};
inline constexpr EnvironmentVariable kSearchPathVariable{
    "PATH", "the client shim, in the environment the child gets",
    "where an executable named without a slash is searched, as execvp(3) searches it"};
inline constexpr EnvironmentVariable kBindingVariable{
    "SPINRPC_BINDING", "the Node package's JavaScript (node/recognize.mjs)",
    "a comma-separated list: required (a TypeScript 7 sync channel loaded without the binding under it is "
    "an error), report (one line on stderr each time the binding goes under a TypeScript 7 API); read in "
    "JavaScript, declared here so that the table is whole (docs/NODE.md)"};
inline constexpr EnvironmentVariable kShmVariable{
    "SPINRPC_SHM", "spinrpc-server, the client shim, the Node binding; the shim and the binding set it for the server they start",
    "off or 0: no shared memory at this end (--shm=off, SyncRpcOptions::shared_memory and sharedMemory beat it); "
    "fd:N,parent:PID,inode:DEV:INO: set by a spinrpc client (pid PID) for the server it starts, the memfd it "
    "offers, inherited as fd N, taken only by PID's child; unset, auto, "
    "on or 1: a client offers, a server takes an offer (docs/SHARED-MEMORY.md)"};
inline constexpr EnvironmentVariable kTraceVariable{
    "SPINRPC_TRACE", "spinrpc-server, the client shim, the Node binding; a server started by them inherits it",
    "a file to write a Chrome trace-event JSON trace of every request to, at close(), at exit and on SIGTERM; "
    "%p in it becomes the process id, and without %p a server adds its pid (--trace and the trace options beat "
    "it; docs/TRACE.md)"};
inline constexpr EnvironmentVariable kTraceMaxVariable{
    "SPINRPC_TRACE_MAX", "spinrpc-server, the client shim, the Node binding",
    "how many requests a channel's trace keeps, the last ones (a positive integer; default 131072, a ring of "
    "about 64 MiB, backed only as it fills; docs/TRACE.md)"};

/// Every environment variable spinrpc reads (or reserves), in one table.
inline constexpr std::array kEnvironmentVariables = {
    kSpinBudgetVariable, kSpinAdaptiveVariable, kPlacementVariable, kPeerSpinsVariable,
    kLendRepliesVariable, kApiVersionVariable, kWorkingDirectoryVariable, kSearchPathVariable, kBindingVariable,
    kShmVariable, kTraceVariable, kTraceMaxVariable,
};

/// The "NAME=1" entries of kLendRepliesVariable and kPeerSpinsVariable.
inline constexpr std::string_view kLendRepliesEntry = "SPINRPC_LEND_REPLIES=1";
inline constexpr std::string_view kPeerSpinsEntry = "SPINRPC_PEER_SPINS=1";
static_assert(kLendRepliesEntry.starts_with(kLendRepliesVariable.name));
static_assert(kPeerSpinsEntry.starts_with(kPeerSpinsVariable.name));

/// The entries the client shim and the binding add to the environment of a
/// server they start, unless the variable is set there already (what the
/// user set wins): kLendRepliesVariable always (they read its stdout with
/// read(2)), kPeerSpinsVariable when the client's budget is over 0.
std::span<const std::string_view> entries_for_started_server(bool client_spins) noexcept;

/// A client's offer of shared memory, as kShmVariable carries it to the
/// server it spawns: "fd:N,parent:PID,inode:DEV:INO" (docs/SHARED-MEMORY.md,
/// "Handshake"). The memfd is fd N of the process whose parent is PID (the
/// client), and fstat(2) gives it st_dev DEV and st_ino INO, all decimal.
/// Only that process takes it: any other that inherits the variable (a
/// wrapper's child) finds another parent and leaves it alone.
struct ShmOffer {
  int fd = -1;                ///< 3 or above
  long long parent_pid = 0;   ///< the client's pid; above 0
  unsigned long long device = 0;  ///< the memfd's st_dev
  unsigned long long inode = 0;   ///< the memfd's st_ino
};
/// What kShmVariable says: off, or a client's offer, or neither (offer,
/// and take an offer).
struct ShmSetting {
  bool off = false;
  std::optional<ShmOffer> offer;  ///< set by a spinrpc client only
};
/// The one parser of kShmVariable's value; std::nullopt for anything else
/// (a bare "fd:N", which names no process, included).
std::optional<ShmSetting> parse_shm_setting(std::string_view text);
/// The descriptor a client's memfd has in the server it starts.
inline constexpr int kShmOfferedFd = 3;
/// The entry that makes `offer` in the environment of the server a client
/// starts ("SPINRPC_SHM=fd:3,parent:…"), replacing any other SPINRPC_SHM
/// there: the offer is the client's to make. The one writer of the format
/// parse_shm_setting reads.
std::string shm_offer_entry(const ShmOffer& offer);

/// Where a channel's trace goes and how much it keeps (docs/TRACE.md).
struct TraceSetting {
  std::string pattern;  ///< the file, "%p" not yet replaced (trace/trace_registry.h: expand_path)
  std::size_t max_requests = 0;
};
/// Requests a trace keeps by default: 131072 × 12 records of 40 bytes, a
/// ring of 60 MiB (trace/trace_ring.h).
inline constexpr std::size_t kDefaultTraceRequests = 131072;
/// The largest SPINRPC_TRACE_MAX taken: a ring of 7.5 GiB of address space.
inline constexpr std::size_t kMaxTraceRequests = std::size_t{1} << 24;
/// Explicit settings that beat the environment: the server's --spin-us and
/// --adaptive flags, the client shim's options.
struct SpinOverrides {
  /// Spin budget, µs; 0 = off. A negative value is reported as one line on
  /// stderr by resolve_spin_policy and ignored (the environment or the
  /// default decides).
  std::optional<long long> spin_us;
  std::optional<bool> adaptive;  ///< adaptive rule on or off
  /// Placement policy (docs/PLACEMENT.md): auto, off, or occupy (always,
  /// for measurements). Applies only with a budget > 0.
  std::optional<PlacementController::Setting> placement;
};

/// The one parser of a spin budget written as text (a flag's value, an
/// environment variable): a non-negative decimal number of µs, nothing else.
std::optional<long long> parse_spin_us(std::string_view text);
/// The one parser of the adaptive switch written as text: "1" or "true",
/// "0" or "false".
std::optional<bool> parse_spin_adaptive(std::string_view text);

/// Which spin setting a value was meant for.
enum class SpinSetting { budget_us, adaptive, placement };
/// The one line (no newline, no program name) that reports an invalid spin
/// setting, whatever gave it: `source` is "--spin-us", "TSGO_SYNC_SPIN_US",
/// "SyncRpcOptions::spin.spin_us", ...; `value` as given. The setting is
/// then ignored: the next source in line, or the default, decides.
std::string ignored_spin_setting(SpinSetting setting, std::string_view source, std::string_view value);

/// How many CPUs this process may use, and what said so.
struct CpuAllowance {
  double cpus;         ///< may be fractional under a cgroup quota
  std::string source;  ///< "sched_getaffinity", "cgroup cpu.max", ...
};

/// The CPUs a cgroup v2 quota leaves the process whose membership file
/// (/proc/self/cgroup: "0::/a/b") is `membership_file`, with the cgroup tree
/// mounted at `cgroup_root` (/sys/fs/cgroup): the smallest quota/period of
/// the cpu.max files of its cgroup and of every ancestor below the root,
/// since each ancestor's quota bounds all of its descendants together.
/// std::nullopt when none sets a quota, under cgroup v1, or when nothing is
/// readable. Never throws. Paths are parameters so tests can use a fake tree.
std::optional<double> cgroup_quota_cpus(const std::string& membership_file,
                                        const std::string& cgroup_root);

/// Reads sched_getaffinity(2) and cgroup_quota_cpus of this process
/// (/proc/self/cgroup, /sys/fs/cgroup), and returns the smaller. Never
/// throws: an unreadable source is skipped.
CpuAllowance available_cpus();

/// Environment lookup, injectable for tests; returns nullptr when unset.
using EnvLookup = std::function<const char*(const char* name)>;

/// getenv(3): this process's environment. The one place spinrpc's C++
/// reads it.
const char* process_environment(const char* name);

/// Whether `variable` is "1" in `env` (kLendRepliesVariable, kPeerSpinsVariable).
bool variable_says_yes(const EnvironmentVariable& variable, const EnvLookup& env);

/// Whether a client offers shared memory to a server it starts: `option`
/// when set, else what kShmVariable in `env` says (an invalid value is one
/// line on stderr, and the client offers).
bool client_offers_shm(std::optional<bool> option, const EnvLookup& env);

/// Whether and where to trace: `option` (a flag, SyncRpcOptions::trace, the
/// binding's trace) when set, else kTraceVariable in `env`; an empty value
/// is off. The size from kTraceMaxVariable; an invalid one is one line
/// appended to `warnings`, and the default is used.
std::optional<TraceSetting> resolve_trace_setting(const std::optional<std::string>& option, const EnvLookup& env,
                                                  std::vector<std::string>& warnings);

/// Writes `lines` (each a setting ignored or refused, without newline) to
/// stderr as "<program>: <line>\n" in one write that never waits
/// (descriptor/stderr_lines.h): the one place a setting's warning is printed.
void print_setting_warnings(std::string_view program, std::span<const std::string> lines);

/// Resolves the spin policy once at start-up (docs/SPIN.md#settings):
/// a flag or option beats TSGO_SYNC_SPIN_US / TSGO_SYNC_SPIN_ADAPTIVE, which
/// beat the defaults (100 µs, adaptive on). With fewer than 2 CPUs (`cpus`)
/// the default budget is 0: spinning on the CPU the peer needs only delays
/// it (docs/SPIN.md#one-cpu); an explicit setting still wins. A negative override or an unparsable
/// or negative environment value is reported as one line appended to
/// `warnings` ("spinrpc: " + ignored_spin_setting(...) + "\n"), then ignored. The result's
/// `reason` says which rule decided the budget. Placement: the override
/// beats SPINRPC_PLACEMENT, which beats the default, auto; `placement_reason`
/// says which.
SpinPolicy resolve_spin_policy(const SpinOverrides& overrides, const EnvLookup& env,
                               const CpuAllowance& cpus, std::string& warnings);

/// resolve_spin_policy with the process's environment, available_cpus()
/// and stderr, written without waiting (descriptor/stderr_lines.h).
SpinPolicy resolve_spin_policy(const SpinOverrides& overrides = {});

/// The same with `env` for the environment: a client whose server gets
/// an environment other than this process's (SyncRpcOptions::environment)
/// reads its own settings from that one too.
SpinPolicy resolve_spin_policy(const SpinOverrides& overrides, const EnvLookup& env);

/// spinrpc-server's settings from its flags and the environment its client
/// started it with, resolved once.
struct ServerSettings {
  /// resolve_spin_policy(flags), with peer_spins from kPeerSpinsVariable
  /// (placement_reason then says so) and follow_peer on: the server is the
  /// pair's one follower (docs/PLACEMENT.md#following-the-peer-when-the-cpus-are-taken).
  SpinPolicy spin;
  bool lend_replies = false;  ///< kLendRepliesVariable is "1"
};
/// resolve_server_settings with `env`, `cpus` and `warnings` as for
/// resolve_spin_policy.
ServerSettings resolve_server_settings(const SpinOverrides& flags, const EnvLookup& env,
                                       const CpuAllowance& cpus, std::string& warnings);
/// The same with the process's environment, available_cpus() and stderr.
ServerSettings resolve_server_settings(const SpinOverrides& flags);

}  // namespace spinrpc
