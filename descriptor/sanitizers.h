#pragma once
// Whether this build runs under a sanitizer. A sanitizer build trades speed
// for what the sanitizer can see: the hot path then goes through the C
// library's calls, which ASan and TSan intercept, and spinrpc's threads keep
// the process's descriptor table, so that their reports reach stderr
// (descriptor/syscall.h, descriptor/descriptor_table.h). Tests read it too, for
// the few whose subject a sanitizer changes.

namespace spinrpc {

// GCC says so by a macro, Clang by __has_feature (which GCC before 14 lacks).
#if defined(__has_feature)
#define SPINRPC_HAS_FEATURE(feature) __has_feature(feature)
#else
#define SPINRPC_HAS_FEATURE(feature) 0
#endif

inline constexpr bool kUnderAddressSanitizer =
#if defined(__SANITIZE_ADDRESS__) || SPINRPC_HAS_FEATURE(address_sanitizer)
    true;
#else
    false;
#endif

inline constexpr bool kUnderThreadSanitizer =
#if defined(__SANITIZE_THREAD__) || SPINRPC_HAS_FEATURE(thread_sanitizer)
    true;
#else
    false;
#endif

#undef SPINRPC_HAS_FEATURE

inline constexpr bool kUnderSanitizer = kUnderAddressSanitizer || kUnderThreadSanitizer;

}  // namespace spinrpc
