#pragma once
// Whether this build runs under a sanitizer (descriptor/sanitizers.h), for the
// few tests whose subject a sanitizer changes: resident memory (ASan's
// quarantine), address space limits (ASan and TSan reserve terabytes of
// shadow at start), signal delivery (TSan defers a signal to its next safe
// point), descriptor tables (kept under a sanitizer).

#include "descriptor/sanitizers.h"

namespace spinrpc::test {

using spinrpc::kUnderAddressSanitizer;
using spinrpc::kUnderSanitizer;
using spinrpc::kUnderThreadSanitizer;

}  // namespace spinrpc::test
