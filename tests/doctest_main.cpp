// The one doctest main every suite links. SPINRPC_TEST_EXCLUDE, when set,
// is a --test-case-exclude filter (names separated by commas, * and ?
// wildcards) applied before the command line's own options:
// scripts/test-arm64.sh names there the cases qemu-user cannot run, each
// with its reason.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdlib>

int main(int argc, char** argv) {
  doctest::Context context;
  if (const char* exclude = std::getenv("SPINRPC_TEST_EXCLUDE"); exclude != nullptr && *exclude != '\0') {
    context.addFilter("test-case-exclude", exclude);
  }
  context.applyCommandLine(argc, argv);
  return context.run();
}
