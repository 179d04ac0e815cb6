#pragma once
// Whether this build runs under a sanitizer. A sanitizer build trades speed
// for what the sanitizer can see: the hot path then goes through the C
// library's calls, which ASan and TSan intercept, and spinrpc's threads keep
// the process's descriptor table, so that their reports reach stderr
// (channel/syscall.h, channel/descriptor_table.h). Tests read it too, for
// the few whose subject a sanitizer changes.

namespace spinrpc {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kUnderAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kUnderAddressSanitizer = true;
#else
inline constexpr bool kUnderAddressSanitizer = false;
#endif
#else
inline constexpr bool kUnderAddressSanitizer = false;
#endif

#if defined(__SANITIZE_THREAD__)
inline constexpr bool kUnderThreadSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
inline constexpr bool kUnderThreadSanitizer = true;
#else
inline constexpr bool kUnderThreadSanitizer = false;
#endif
#else
inline constexpr bool kUnderThreadSanitizer = false;
#endif

inline constexpr bool kUnderSanitizer = kUnderAddressSanitizer || kUnderThreadSanitizer;

}  // namespace spinrpc
