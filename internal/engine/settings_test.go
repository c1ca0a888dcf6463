package engine

import (
	"encoding"
	"strings"
	"testing"
	"time"
)

// TestSettingFields: every setting a study may name has a field to decode into,
// of a type a decoder can fill, and no other name has one.
func TestSettingFields(t *testing.T) {
	s := DefaultSettings()
	seen := map[any]string{}
	for _, name := range SettingNames {
		f, ok := s.Field(name)
		if !ok {
			t.Errorf("%s: no field", name)
			continue
		}
		switch f.(type) {
		case *int, *bool, *float64, encoding.TextUnmarshaler:
		default:
			t.Errorf("%s: a %T cannot be decoded", name, f)
		}
		if other, dup := seen[f]; dup {
			t.Errorf("%s and %s share a field", name, other)
		}
		seen[f] = name
	}
	for _, name := range []string{"dsn", "json", "label", "progress", "max-tries", ""} {
		if _, ok := s.Field(name); ok {
			t.Errorf("%q is a setting", name)
		}
	}
	// Text reaches the field it names.
	d, _ := s.Field("tx_timeout")
	if err := d.(encoding.TextUnmarshaler).UnmarshalText([]byte("90")); err != nil || s.TxTimeout != 90*time.Second {
		t.Errorf("tx_timeout 90: %v, %s", err, s.TxTimeout)
	}
}

// TestSettingValues: auto, on and off, seeds and loops read as the command line
// and studies write them, and other text is refused naming what to write.
func TestSettingValues(t *testing.T) {
	for _, tc := range []struct {
		text string
		want Switch
	}{{"auto", Auto}, {"on", On}, {"true", On}, {"off", Off}, {"false", Off}, {"OFF", Off}} {
		var s Switch
		if err := s.Set(tc.text); err != nil || s != tc.want {
			t.Errorf("switch %q: %v, %v", tc.text, s, err)
		}
	}
	var sw Switch
	if err := sw.Set("maybe"); err == nil || !strings.Contains(err.Error(), "auto, on or off") {
		t.Errorf("switch maybe: %v", err)
	}
	var seed Seed
	if err := seed.Set("0"); err != nil || seed != (Seed{0, true}) || seed.String() != "0" {
		t.Errorf("seed 0: %+v, %v", seed, err)
	}
	if err := seed.Set("auto"); err != nil || seed.Fixed || seed.String() != "auto" {
		t.Errorf("seed auto: %+v, %v", seed, err)
	}
	if err := seed.Set("-1"); err == nil {
		t.Error("seed -1 was taken")
	}
	var j Jobs
	if err := j.Set("4"); err != nil || j != 4 || j.String() != "4" {
		t.Errorf("jobs 4: %v, %v", j, err)
	}
	if err := j.Set("0"); err == nil {
		t.Error("jobs 0 was taken")
	}
}

// TestSettingsValidate: a bad setting is a FieldError naming it.
func TestSettingsValidate(t *testing.T) {
	for field, set := range map[string]func(*Settings){
		"clients":         func(s *Settings) { s.Clients = 0 },
		"max_tries":       func(s *Settings) { s.MaxTries = 0 },
		"rate":            func(s *Settings) { s.Rate = -1 },
		"tx_timeout":      func(s *Settings) { s.TxTimeout = -time.Second },
		"latency_limit":   func(s *Settings) { s.LatencyLimit = -time.Second },
		"connect_timeout": func(s *Settings) { s.ConnectTimeout = -time.Second },
	} {
		s := DefaultSettings()
		set(&s)
		fe, ok := s.Validate().(*FieldError)
		if !ok || fe.Field != field || !strings.HasPrefix(fe.Named("--x"), "--x ") {
			t.Errorf("%s: %v", field, s.Validate())
		}
	}
	s := DefaultSettings()
	if err := s.Validate(); err != nil {
		t.Errorf("the defaults: %v", err)
	}
}
