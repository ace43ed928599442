#!/usr/bin/python3
"""A test RTSP server on 127.0.0.1 (GStreamer's gst-rtsp-server through PyGObject, from Debian's packages): serves an
MJPEG .avi file as RTP/JPEG at rtsp://127.0.0.1:PORT/live, looping, until killed. Prints "ready" once listening.

usage: rtsp_server.py FILE.avi PORT
"""
import sys

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstRtspServer", "1.0")
from gi.repository import GLib, Gst, GstRtspServer  # noqa: E402


def main():
    path, port = sys.argv[1], sys.argv[2]
    Gst.init(None)
    server = GstRtspServer.RTSPServer()
    server.set_address("127.0.0.1")
    server.set_service(port)
    factory = GstRtspServer.RTSPMediaFactory()
    # avidemux hands out the JPEG frames as they are: no decoder or encoder needed
    factory.set_launch(f'( filesrc location="{path}" ! avidemux ! rtpjpegpay name=pay0 pt=26 )')
    factory.set_shared(True)
    server.get_mount_points().add_factory("/live", factory)
    server.attach(None)
    print("ready", flush=True)
    GLib.MainLoop().run()


if __name__ == "__main__":
    main()
