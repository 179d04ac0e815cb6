#pragma once

// The settings module moved to wait/settings.h. This name stays only for
// the two files that still include it (channel/spin_reader.cpp,
// bench/variant.h), which their owners switch over; then it goes.
#include "wait/settings.h"
