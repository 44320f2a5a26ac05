package secret

import (
	"reflect"
	"testing"
)

func TestWords(t *testing.T) {
	tests := map[string][]string{
		"it":                         nil,
		"that thing":                 nil,
		"forget everything about it": nil,
		"Leo":                        {"leo"},
		"leo's swim":                 {"leo", "swim"},
		"Leo LEO leo":                {"leo"},
		"the swim practice of José":  {"swim", "practice", "jose"},
		"Ana-Maria":                  {"ana", "maria"},
		"":                           nil,
		"   !!! ":                    nil,
	}
	for q, want := range tests {
		if got := Words(q); !reflect.DeepEqual(got, want) {
			t.Errorf("Words(%q) = %q, want %q", q, got, want)
		}
	}
}

func TestMatchesAll(t *testing.T) {
	tests := []struct {
		text, query string
		want        bool
	}{
		{"Leo has swim practice Thursdays at 5:30.", "leo", true},
		{"Leo has swim practice Thursdays at 5:30.", "LEO SWIM", true},
		{"Leo has swim practice Thursdays at 5:30.", "leo piano", false},
		{"Leonard plays chess.", "leo", false},
		{"Leo's swim practice moved.", "leo", true},
		{"Anything at all.", "it", false},
		{"It is raining.", "it", false},
		{"José moved to Porto.", "jose", true},
		{"Jose moved to Porto.", "José", true},
		{"Swimming on Thursdays.", "swim", false},
		{"Ana-Maria paints.", "maria", true},
		{"Practice at 5:30", "5", true},
		{"Practice at 5:30", "30", true},
	}
	for _, tt := range tests {
		if got := MatchesAll(tt.text, Words(tt.query)); got != tt.want {
			t.Errorf("MatchesAll(%q, Words(%q)) = %v, want %v", tt.text, tt.query, got, tt.want)
		}
	}
	if MatchesAll("anything", nil) {
		t.Error("no words matched something")
	}
}

func TestFold(t *testing.T) {
	for in, want := range map[string]string{"José": "Jose", "Straße": "Strasse", "Łódź": "Lodz", "Ærø": "AEro", "plain": "plain", "日本": "日本"} {
		if got := Fold(in); got != want {
			t.Errorf("Fold(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestProperNames(t *testing.T) {
	tests := map[string][]string{
		"Leo has swim practice Thursdays at 5:30.":        {"Leo"},
		"Started a new job at Acme on 3 Nov 2026.":        {"Acme"},
		"Ana Maria is Leo's godmother.":                   {"Ana Maria", "Leo"},
		"Has an account at Bank of America since 2019.":   {"Bank of America"},
		"Prefers replies in Spanish.":                     nil,
		"I met Dr. Silva on Monday in January.":           {"Silva"},
		"The dentist is Dr Costa in Lisbon.":              {"Costa", "Lisbon"},
		"Leo's swim coach is Marta. She is strict.":       {"Leo", "Marta"},
		"Went to Porto with Ana and Rui.":                 {"Porto", "Ana", "Rui"},
		"Maria da Silva lives in São Paulo.":              {"Maria da Silva", "São Paulo"},
		"Renovated the kitchen in May.":                   nil,
		"My Aunt Rosa turns 80 in March.":                 {"Rosa"},
		"Christmas is at Ana's this year.":                {"Ana"},
		"Works at NASA.":                                  {"NASA"},
		"leo likes pizza.":                                nil,
		"Uses an iPhone 15.":                              nil,
		"Leo and Leo's friend Tom went to Leo's school.":  {"Leo", "Tom"},
		"Visited \"Casa Pia\" with the kids on Saturday.": {"Casa Pia"},
		// A line that asks for something to be done opens with a verb, not a name.
		"Remind me to call the dentist on Friday.": nil,
		"Call Leo on Sunday.":                      {"Leo"},
		"Ask Ana about the keys.":                  {"Ana"},
		"Book the flight to Lisbon.":               {"Lisbon"},
		"Pick up Leo at 5. Buy milk for Ana.":      {"Leo", "Ana"},
		"Don't forget Leo's recital.":              {"Leo"},
		"Leo is sick. Tell Rui and Ana.":           {"Leo", "Rui", "Ana"},
		// A verb that is also a first name is read as the name.
		"Mark starts school on Monday.": {"Mark"},
	}
	for text, want := range tests {
		if got := ProperNames(text); !reflect.DeepEqual(got, want) {
			t.Errorf("ProperNames(%q) = %q, want %q", text, got, want)
		}
	}
}
