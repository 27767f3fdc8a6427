//go:build linux || darwin

package main

import (
	"syscall"
	"unsafe"
)

// The SQL client's terminal handling, with the system calls of the
// standard library: whether a file is a terminal, its size, and a mode
// that delivers keys as they are typed (for the q of the result views).

func ioctl(fd uintptr, req uintptr, arg unsafe.Pointer) error {
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, fd, req, uintptr(arg)); e != 0 {
		return e
	}
	return nil
}

// isTTY says whether fd is a terminal.
func isTTY(fd uintptr) bool {
	var t syscall.Termios
	return ioctl(fd, ioctlGetTermios, unsafe.Pointer(&t)) == nil
}

// winsize is struct winsize of <sys/ioctl.h>.
type winsize struct{ rows, cols, xpixel, ypixel uint16 }

// ttySize returns the rows and columns of the terminal fd, or ok
// false if it cannot tell.
func ttySize(fd uintptr) (rows, cols int, ok bool) {
	var w winsize
	if ioctl(fd, syscall.TIOCGWINSZ, unsafe.Pointer(&w)) != nil || w.rows == 0 || w.cols == 0 {
		return 0, 0, false
	}
	return int(w.rows), int(w.cols), true
}

// ttyKeysMode turns off the line discipline's line editing and echo on the
// terminal fd, so that each key reaches the client as it is typed (Ctrl-C
// still interrupts), and returns the function that restores the terminal.
func ttyKeysMode(fd uintptr) (restore func(), err error) {
	var old syscall.Termios
	if err := ioctl(fd, ioctlGetTermios, unsafe.Pointer(&old)); err != nil {
		return nil, err
	}
	t := old
	t.Lflag &^= syscall.ICANON | syscall.ECHO
	t.Cc[syscall.VMIN], t.Cc[syscall.VTIME] = 1, 0
	if err := ioctl(fd, ioctlSetTermios, unsafe.Pointer(&t)); err != nil {
		return nil, err
	}
	return func() { ioctl(fd, ioctlSetTermios, unsafe.Pointer(&old)) }, nil
}
