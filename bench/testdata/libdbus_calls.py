#!/usr/bin/env python3
"""Times method calls the way a libdbus client makes them.

    libdbus_calls.py ADDRESS N DEST PATH INTERFACE METHOD [STRING_ARG]

Opens its own connection to the bus at ADDRESS with libdbus (through
ctypes: no bindings, no build step), then makes N sequential calls of
INTERFACE.METHOD on DEST at PATH, each a fresh message with the one string
argument if given, sent with dbus_connection_send_with_reply_and_block. Prints one line per call: the round trip in
nanoseconds, send to reply. Exits 1 naming the error if any call fails, so
an empty or wrong peer never reads as fast.
"""

import ctypes
import sys
import time

DBUS_TYPE_STRING = ord("s")
DBUS_TYPE_INVALID = 0
DBUS_MESSAGE_TYPE_ERROR = 3


class DBusError(ctypes.Structure):
    # struct DBusError: name, message, five one-bit fields, padding.
    _fields_ = [("name", ctypes.c_char_p), ("message", ctypes.c_char_p),
                ("bits", ctypes.c_uint), ("padding1", ctypes.c_void_p)]


def main(argv):
    if len(argv) not in (7, 8):
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    address, n = argv[1], int(argv[2])
    dest, path, iface, method = argv[3:7]
    arg = argv[7].encode() if len(argv) == 8 else None

    lib = ctypes.CDLL("libdbus-1.so.3")
    lib.dbus_connection_open_private.restype = ctypes.c_void_p
    lib.dbus_connection_open_private.argtypes = [ctypes.c_char_p, ctypes.POINTER(DBusError)]
    lib.dbus_bus_register.argtypes = [ctypes.c_void_p, ctypes.POINTER(DBusError)]
    lib.dbus_message_new_method_call.restype = ctypes.c_void_p
    lib.dbus_message_new_method_call.argtypes = [ctypes.c_char_p] * 4
    lib.dbus_connection_send_with_reply_and_block.restype = ctypes.c_void_p
    lib.dbus_connection_send_with_reply_and_block.argtypes = [
        ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(DBusError)]
    lib.dbus_message_get_type.argtypes = [ctypes.c_void_p]
    lib.dbus_message_get_error_name.restype = ctypes.c_char_p
    lib.dbus_message_get_error_name.argtypes = [ctypes.c_void_p]
    lib.dbus_message_unref.argtypes = [ctypes.c_void_p]

    err = DBusError()
    lib.dbus_error_init(ctypes.byref(err))

    def fail(what):
        detail = err.message.decode() if err.message else what
        print(f"libdbus_calls: {detail}", file=sys.stderr)
        return 1

    conn = lib.dbus_connection_open_private(address.encode(), ctypes.byref(err))
    if not conn or not lib.dbus_bus_register(conn, ctypes.byref(err)):
        return fail("cannot connect to " + address)

    c_arg = ctypes.c_char_p(arg)

    def new_call():
        msg = lib.dbus_message_new_method_call(dest.encode(), path.encode(), iface.encode(), method.encode())
        if arg is not None:
            lib.dbus_message_append_args(ctypes.c_void_p(msg), ctypes.c_int(DBUS_TYPE_STRING),
                                         ctypes.byref(c_arg), ctypes.c_int(DBUS_TYPE_INVALID))
        return msg

    out = []
    for _ in range(n):
        msg = new_call()
        start = time.perf_counter_ns()
        reply = lib.dbus_connection_send_with_reply_and_block(conn, msg, 5000, ctypes.byref(err))
        took = time.perf_counter_ns() - start
        lib.dbus_message_unref(msg)
        if not reply:
            return fail(f"{iface}.{method} on {dest} failed")
        lib.dbus_message_unref(reply)
        out.append(took)
    sys.stdout.write("".join(f"{t}\n" for t in out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
