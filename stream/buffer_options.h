#pragma once

#include <cstddef>  // std::size_t

namespace spinrpc {

/// How a channel's streams buffer and write (ByteStream, FdOutputStream).
struct BufferOptions {
  /// Initial read buffer, in bytes; also the read-ahead per read(2) for
  /// small messages. 64 KiB holds one pipe's worth (the Linux default pipe
  /// capacity), so a burst never needs two reads.
  std::size_t initial_buffer_bytes = std::size_t{64} << 10;
  /// A read buffer grown beyond this many bytes for big messages is given
  /// back once a message that did not need it (at most this many bytes)
  /// has been read, so one 200 MiB message does not pin 200 MiB for the
  /// rest of the session (it does until the next message comes), while a
  /// run of big messages reuses one buffer: a fresh buffer for each cost
  /// spinrpc-server a page fault per 4 KiB, 4,098 per 16 MiB echo
  /// (docs/NODE.md, "The reply's pages"). Growth up to it is kept, so
  /// steady traffic of 1 MiB messages never reallocates.
  std::size_t retained_buffer_bytes = std::size_t{16} << 20;
  /// How a write puts parts of FdOutputStream::kLendMinBytes or more into a pipe or
  /// FIFO (a socket always takes copies). A pipe's own pages cost the reader
  /// several times more to copy from than pages lent to it, and a pipe
  /// lets one side copy at a time (docs/NODE.md, "Large payloads").
  enum class LargeWrites {
    /// writev(2): the pipe copies them into pages of its own.
    copy,
    /// vmsplice(2) of the caller's memory: the pipe refers to it and the
    /// reader copies straight out of it. The contract: those bytes must
    /// not change, nor their memory be freed, until the peer has read
    /// them. A request–reply client gives that when it changes a buffer it
    /// wrote from only after the peer's next message has arrived (the
    /// client shim does; this stream's own read buffers are kept until
    /// then). A writer that pipelines out of a reused buffer must not.
    lend,
    /// Copied into buffers of this stream's own, which are lent; a buffer
    /// is written again only once the pipe is seen empty (FIONREAD), so the
    /// caller's memory is free at once, whatever the peer sends meanwhile
    /// (spinrpc-server's Responses; a client may pipeline). Needs a reader
    /// that copies out with read(2): one that splices or tees the pipe
    /// would carry the pages on, and see them change.
    lend_copies,
  };
  LargeWrites large_writes = LargeWrites::copy;
  /// While a write waits for the peer to take bytes, read what the peer
  /// sends into the read buffer, so that a peer that writes all its
  /// requests before it reads a reply is not left blocked writing while we
  /// block writing to it (tsgo's --async reads on a goroutine of its own;
  /// docs/ASYNC.md, "Replies and handlers"). Writes then go through a
  /// non-blocking description of our own for a pipe or FIFO (opened again
  /// through /proc, the fd left as found) or MSG_DONTWAIT for a socket; a
  /// file or terminal is written as before. Large writes are copied. What
  /// is read ahead is bounded only by max_message_bytes per message, as
  /// tsgo buffers it. A view of the last message read stays valid across
  /// such a write only under a Hold (ByteStream::hold()). For spinrpc-server --async.
  bool read_while_writing = false;
  /// When a message bigger than what the read pipe holds is on its way
  /// (ByteStream::expect), grow that pipe (F_SETPIPE_SZ, up to
  /// kMaxPipeBytes (descriptor/pipe.h)) so that a writer that copies into it waits
  /// for us once per pipeful, not once per 64 KiB: tsgo writes each reply
  /// with one write(2) (docs/NODE.md, "tsgo's big replies").
  /// Only for a pipe the owner of the stream created (the client shim's
  /// child's stdout): a server leaves the pipes it is handed as they are.
  /// A refusal (pipe-max-size, the user's pipe budget, not a pipe) leaves
  /// the fd as it is.
  bool grow_read_pipe = false;
};

}  // namespace spinrpc
