# A native Wayland window for the compositor tests: GTK 4 with the application
# id and title given, which takes each line written to the fifo as its new
# title. NON_UNIQUE: two windows of one app id are two programs, as in a test
# that opens the same app twice.
import os
import sys

import gi

gi.require_version("Gtk", "4.0")
from gi.repository import Gio, GLib, Gtk  # noqa: E402

app_id, title, fifo = sys.argv[1:4]
# Opened read-write so the fifo never reads end-of-file between writers.
fd = os.open(fifo, os.O_RDWR)
app = Gtk.Application(application_id=app_id, flags=Gio.ApplicationFlags.NON_UNIQUE)


def on_activate(app):
    win = Gtk.ApplicationWindow(application=app, title=title)
    win.present()
    pending = [b""]

    def on_input(_fd, _cond):
        pending[0] += os.read(fd, 4096)
        while b"\n" in pending[0]:
            line, pending[0] = pending[0].split(b"\n", 1)
            win.set_title(line.decode())
        return True

    GLib.unix_fd_add_full(GLib.PRIORITY_DEFAULT, fd, GLib.IOCondition.IN, on_input)


app.connect("activate", on_activate)
app.run([])
