import { InitialSchema1763740800000 } from './1763740800000-initial-schema.js';
import { MessagesAndContacts1763827200000 } from './1763827200000-messages-and-contacts.js';
import { TemplateEvents1763913600000 } from './1763913600000-template-events.js';
import { Batches1764000000000 } from './1764000000000-batches.js';
import { DurableTurns1764100000000 } from './1764100000000-durable-turns.js';
import { ContactIdentities1764200000000 } from './1764200000000-contact-identities.js';
import { TemplateEventsOnce1764300000000 } from './1764300000000-template-events-once.js';
import { EventForwarding1764400000000 } from './1764400000000-event-forwarding.js';
import { ConversationsAndHandoff1764500000000 } from './1764500000000-conversations-and-handoff.js';
import { InstanceAgentSettings1764600000000 } from './1764600000000-instance-agent-settings.js';
import { EventsWhenWanted1764700000000 } from './1764700000000-events-when-wanted.js';
import { ConversationPositions1764800000000 } from './1764800000000-conversation-positions.js';
import { ConversationIndexes1764860000000 } from './1764860000000-conversation-indexes.js';
import { CurrentSql1795634419494 } from './1795634419494-current-sql.js';
import { EventsWantedAsJoin1795640038616 } from './1795640038616-events-wanted-as-join.js';
import { EventsSubscriptionsBeforeLanes1795650683124 } from './1795650683124-events-subscriptions-before-lanes.js';
import { Accounts1795652000000 } from './1795652000000-accounts.js';
import { PeopleWhoSend1795660829636 } from './1795660829636-people-who-send.js';
import { PeopleWhoSendEvents1795660949914 } from './1795660949914-people-who-send-events.js';
import { LiveListeners1795661709573 } from './1795661709573-live-listeners.js';
import { LiveNotifications1795661881922 } from './1795661881922-live-notifications.js';
import { SendsByTime1795674961575 } from './1795674961575-sends-by-time.js';
import { TurnLive1795677029198 } from './1795677029198-turn-live.js';
import { ContactsRead1795677110849 } from './1795677110849-contacts-read.js';
import { ContactsReadLive1795678656403 } from './1795678656403-contacts-read-live.js';
import { TemplateCatalogue1795683564126 } from './1795683564126-template-catalogue.js';
import { Campaigns1795685448338 } from './1795685448338-campaigns.js';
import { InstanceSending1795688380062 } from './1795688380062-instance-sending.js';
import { CampaignRecipientAddresses1795696949841 } from './1795696949841-campaign-recipient-addresses.js';
import { BusinessDailyLimit1795697552301 } from './1795697552301-business-daily-limit.js';
import { CampaignRetries1795697924305 } from './1795697924305-campaign-retries.js';
import { MarketingOptOuts1795700754898 } from './1795700754898-marketing-opt-outs.js';
import { PhoneAppEchoes1795701092507 } from './1795701092507-phone-app-echoes.js';
import { PhoneContacts1795701618804 } from './1795701618804-phone-contacts.js';
import { HistoryImports1795701809287 } from './1795701809287-history-imports.js';
import { TemplateChanges1795684767652 } from './1795684767652-template-changes.js';
import { CampaignEvents1795685817560 } from './1795685817560-campaign-events.js';
import { HistoryEvents1795701819995 } from './1795701819995-history-events.js';
import { HandoffHistory1795707165946 } from './1795707165946-handoff-history.js';
import { HandoffHistoryTrigger1795707174253 } from './1795707174253-handoff-history-trigger.js';
import { LiveContactMarketing1795707742197 } from './1795707742197-live-contact-marketing.js';
import { PhoneNameTime1795707994000 } from './1795707994000-phone-name-time.js';
import { ImportedHistoryLive1795708065124 } from './1795708065124-imported-history-live.js';
import { ContactActivity1795708304631 } from './1795708304631-contact-activity.js';
import { ContactActivityTrigger1795708314826 } from './1795708314826-contact-activity-trigger.js';
import { ContactActivityBackfill1795711029055 } from './1795711029055-contact-activity-backfill.js';
import { MergeKeepsPreferences1795712788765 } from './1795712788765-merge-keeps-preferences.js';

/**
 * Every migration, oldest first (`npm run sql:migration` appends the ones it writes).
 * The older ones hold their function and trigger statements as one-line strings, the
 * text applied then byte for byte; the current definitions are the `*.sql.ts` files.
 */
export const MIGRATIONS = [
  InitialSchema1763740800000,
  MessagesAndContacts1763827200000,
  TemplateEvents1763913600000,
  Batches1764000000000,
  DurableTurns1764100000000,
  ContactIdentities1764200000000,
  TemplateEventsOnce1764300000000,
  EventForwarding1764400000000,
  ConversationsAndHandoff1764500000000,
  InstanceAgentSettings1764600000000,
  EventsWhenWanted1764700000000,
  ConversationPositions1764800000000,
  ConversationIndexes1764860000000,
  CurrentSql1795634419494,
  EventsWantedAsJoin1795640038616,
  EventsSubscriptionsBeforeLanes1795650683124,
  Accounts1795652000000,
  PeopleWhoSend1795660829636,
  PeopleWhoSendEvents1795660949914,
  LiveListeners1795661709573,
  LiveNotifications1795661881922,
  SendsByTime1795674961575,
  TurnLive1795677029198,
  ContactsRead1795677110849,
  ContactsReadLive1795678656403,
  TemplateCatalogue1795683564126,
  TemplateChanges1795684767652,
  Campaigns1795685448338,
  CampaignEvents1795685817560,
  InstanceSending1795688380062,
  CampaignRecipientAddresses1795696949841,
  BusinessDailyLimit1795697552301,
  CampaignRetries1795697924305,
  MarketingOptOuts1795700754898,
  PhoneAppEchoes1795701092507,
  PhoneContacts1795701618804,
  HistoryImports1795701809287,
  HistoryEvents1795701819995,
  HandoffHistory1795707165946,
  HandoffHistoryTrigger1795707174253,
  LiveContactMarketing1795707742197,
  PhoneNameTime1795707994000,
  ImportedHistoryLive1795708065124,
  ContactActivity1795708304631,
  ContactActivityTrigger1795708314826,
  ContactActivityBackfill1795711029055,
  MergeKeepsPreferences1795712788765,
];
