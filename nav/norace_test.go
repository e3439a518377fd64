//go:build !race

package nav

// qualitySizes are the map sizes TestPathQualityFamilies measures (see
// race_test.go for the race detector's).
var qualitySizes = []int{128, 256}
