package service

// verdictKey is what a verdict depends on besides the rules: the window's
// class, instance and folded, redacted title, and the site in front as the
// judge hears it (siteForJudge). The judge's verdicts are remembered by it.
type verdictKey struct{ class, instance, title, site string }

// verdictKeyOf keys window w, already made private (step 2 of the path).
func (s *Service) verdictKeyOf(w Window) verdictKey {
	return verdictKey{class: w.Class, instance: w.Instance, title: FoldTitle(w.Title), site: s.siteForJudge(w.Site)}
}

// siteForJudge is what the judge is told of a site: its host, and its
// path only when the person opted in (judge_site_paths).
func (s *Service) siteForJudge(site string) string {
	if s.judgeHearsPaths {
		return DisplaySite(site)
	}
	return SiteHost(site)
}
