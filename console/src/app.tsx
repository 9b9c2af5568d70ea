import { useEffect } from 'preact/hooks';
import { ErrorBoundary, LocationProvider, Route, Router, lazy } from 'preact-iso';
import { sessionEnded } from './api/client';
import { Inbox } from './inbox/inbox';
import { Login } from './login';
import { loadSession, session } from './session';
import { INBOX_PATH, NotHere, Shell } from './shell';

// The admin pages load when first opened: an operator's console never fetches them.
const Overview = lazy(() => import('./admin/overview'));
const Instances = lazy(() => import('./admin/instances').then((m) => m.Instances));
const InstanceDetail = lazy(() => import('./admin/instances').then((m) => m.InstanceDetail));
const ApiKeys = lazy(() => import('./admin/api-keys'));
const Accounts = lazy(() => import('./admin/accounts'));
const Events = lazy(() => import('./admin/events').then((m) => m.EventSubscriptions));
const EventDetail = lazy(() => import('./admin/events').then((m) => m.EventSubscriptionDetail));
const Turns = lazy(() => import('./admin/turns').then((m) => m.Turns));
const TurnDetail = lazy(() => import('./admin/turns').then((m) => m.TurnDetail));
// Templates and campaigns: everyone's (an operator's for its instances), loaded when first opened.
const Templates = lazy(() => import('./templates/list').then((m) => m.Templates));
const NewTemplate = lazy(() => import('./templates/create').then((m) => m.NewTemplate));
const TemplateDetail = lazy(() => import('./templates/detail').then((m) => m.TemplateDetail));
const Campaigns = lazy(() => import('./campaigns/list').then((m) => m.Campaigns));
const NewCampaign = lazy(() => import('./campaigns/create').then((m) => m.NewCampaign));
const CampaignDetail = lazy(() => import('./campaigns/detail').then((m) => m.CampaignDetail));

function InboxPage() {
  return session.value ? <Inbox session={session.value} /> : null;
}

/**
 * The console: the login, then the inbox, the templates and the campaigns
 * (and, for admins, the admin pages).
 * When the session ends (a 401) the login shows over the page, which stays as
 * it was (a half-written reply included) and carries on once logged in again.
 */
export function App() {
  useEffect(() => {
    void loadSession();
  }, []);
  if (session.value === undefined) return null;
  if (session.value === null) return <Login />;
  const admin = session.value.role === 'admin';
  const forbidden = () => <NotHere forbidden />;
  return (
    <LocationProvider scope={INBOX_PATH}>
      <Shell session={session.value}>
        <ErrorBoundary>
          <Router>
            <Route path={INBOX_PATH} component={InboxPage} />
            <Route path="/console/templates" component={Templates} />
            <Route path="/console/templates/new" component={NewTemplate} />
            <Route path="/console/templates/:id" component={TemplateDetail} />
            <Route path="/console/campaigns" component={Campaigns} />
            <Route path="/console/campaigns/new" component={NewCampaign} />
            <Route path="/console/campaigns/:id" component={CampaignDetail} />
            <Route path="/console/overview" component={admin ? Overview : forbidden} />
            <Route path="/console/instances" component={admin ? Instances : forbidden} />
            <Route path="/console/instances/:id" component={admin ? InstanceDetail : forbidden} />
            <Route path="/console/keys" component={admin ? ApiKeys : forbidden} />
            <Route path="/console/accounts" component={admin ? Accounts : forbidden} />
            <Route path="/console/events" component={admin ? Events : forbidden} />
            <Route path="/console/events/:id" component={admin ? EventDetail : forbidden} />
            <Route path="/console/turns" component={admin ? Turns : forbidden} />
            <Route path="/console/turns/:id" component={admin ? TurnDetail : forbidden} />
            <Route default component={() => <NotHere forbidden={false} />} />
          </Router>
        </ErrorBoundary>
      </Shell>
      {sessionEnded.value && <Login expired />}
    </LocationProvider>
  );
}
