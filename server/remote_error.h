#include "protocol/remote_error.h"  // forwarding header: RemoteError moved to protocol/ (client-shim needs it too)
