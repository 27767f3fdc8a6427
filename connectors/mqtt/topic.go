package mqtt

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// maxTopicLen is the longest topic or filter MQTT encodes.
const maxTopicLen = 65535

// checkFilter checks a topic filter of a source: levels separated by '/',
// '+' alone in a level, '#' alone in the last level; a shared subscription
// '$share/<group>/<filter>' is checked as its group and filter.
func checkFilter(f string) error {
	if err := checkText(f); err != nil {
		return err
	}
	if rest, ok := strings.CutPrefix(f, "$share/"); ok {
		group, filter, ok := strings.Cut(rest, "/")
		if !ok || group == "" || strings.ContainsAny(group, "+#") || filter == "" {
			return fmt.Errorf("= '%s' is not a shared subscription: write '$share/<group>/<filter>', the group without '+' or '#'", f)
		}
		f = filter
	}
	levels := strings.Split(f, "/")
	for i, l := range levels {
		switch {
		case l == "#" && i != len(levels)-1:
			return fmt.Errorf("= '%s' has '#' before its last level; '#' stands for the rest of the topic and ends a filter", f)
		case l != "#" && strings.Contains(l, "#"):
			return fmt.Errorf("= '%s' has '#' inside a level; it stands alone, as the last level ('sensors/#')", f)
		case l != "+" && strings.Contains(l, "+"):
			return fmt.Errorf("= '%s' has '+' inside a level; it stands alone for one whole level ('sensors/+/temperature')", f)
		}
	}
	return nil
}

// checkTopic checks the topic a sink publishes to.
func checkTopic(t string) error {
	if err := checkText(t); err != nil {
		return err
	}
	if strings.ContainsAny(t, "+#") {
		return fmt.Errorf("= '%s' has a wildcard; a sink publishes to one topic", t)
	}
	if strings.HasPrefix(t, "$") {
		return fmt.Errorf("= '%s' starts with '$', which brokers keep for their own topics ($SYS); publish to another topic", t)
	}
	return nil
}

// checkText checks what every topic and filter is: non-empty UTF-8 of at
// most 65535 bytes, without NUL characters.
func checkText(s string) error {
	switch {
	case s == "":
		return fmt.Errorf("has an empty topic; write levels separated by '/' ('sensors/room1/temperature')")
	case len(s) > maxTopicLen:
		return fmt.Errorf("has a topic of %d bytes; MQTT topics are at most %d", len(s), maxTopicLen)
	case !utf8.ValidString(s) || strings.ContainsRune(s, 0):
		return fmt.Errorf("= '%s' is not valid UTF-8 without NUL characters, as MQTT topics must be", s)
	}
	return nil
}

// filtersOverlap says whether some topic matches both filters a and b:
// level by level, '+' matches any one level and '#' the rest (including
// none: 'a/#' matches 'a'). Wildcards at the first level do not match
// topics starting with '$'. Shared subscriptions compare by their filters.
func filtersOverlap(a, b string) bool {
	a, b = plainFilter(a), plainFilter(b)
	if strings.HasPrefix(a, "$") != strings.HasPrefix(b, "$") {
		first := func(f string) string { l, _, _ := strings.Cut(f, "/"); return l }
		fa, fb := first(a), first(b)
		if fa == "+" || fa == "#" || fb == "+" || fb == "#" {
			return false // the wildcard does not match the other's '$' topics
		}
	}
	al, bl := strings.Split(a, "/"), strings.Split(b, "/")
	for i := 0; i < len(al) && i < len(bl); i++ {
		switch {
		case al[i] == "#" || bl[i] == "#":
			return true
		case al[i] == "+" || bl[i] == "+" || al[i] == bl[i]:
		default:
			return false
		}
	}
	switch {
	case len(al) == len(bl):
		return true
	case len(al) == len(bl)+1:
		return al[len(al)-1] == "#" // 'x/#' matches 'x'
	case len(bl) == len(al)+1:
		return bl[len(bl)-1] == "#"
	}
	return false
}

// plainFilter returns the filter of a shared subscription, or f.
func plainFilter(f string) string {
	if rest, ok := strings.CutPrefix(f, "$share/"); ok {
		if _, filter, ok := strings.Cut(rest, "/"); ok {
			return filter
		}
	}
	return f
}

// sharedFilter returns filter as a shared subscription of group.
func sharedFilter(group, filter string) string {
	return "$share/" + group + "/" + filter
}
